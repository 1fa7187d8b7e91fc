import type { Knex } from 'knex';
import type { Timestamp } from './columns.js';

export const ProjectsTableName = 'projects';

export type DbProject = {
  id: string;
  name: string;
  description: string | null;
  /** The virtual key that meters and limits this project's model calls. */
  virtual_key_id: string | null;
  /** Prompts, completions, tool arguments and results are recorded on this project's turn spans. */
  record_content: boolean;
  /** The model that embeds the project's memory store items (null: search by text only). */
  store_embedding_model_id: string | null;
  /** The vectors' size asked of that model (its `dimensions`); null: the model's own. */
  store_embedding_dims: number | null;
  /** The value's fields embedded when a put names none; null: the whole value. */
  store_embedding_fields: string[] | null;
  created_at: Date;
  updated_at: Date;
};
/** The columns of the project's store embedding setting. */
export type StoreEmbeddingColumns =
  'store_embedding_model_id' | 'store_embedding_dims' | 'store_embedding_fields';
export type DbProjectInsert = Pick<DbProject, 'name'> &
  Partial<Pick<DbProject, 'description' | 'virtual_key_id' | 'record_content' | StoreEmbeddingColumns>>;
export type DbProjectUpdate = Partial<
  Pick<DbProject, 'name' | 'description' | 'virtual_key_id' | 'record_content' | StoreEmbeddingColumns>
> & {
  updated_at?: Timestamp;
};

export type ProjectsTable = Knex.CompositeTableType<DbProject, DbProjectInsert, DbProjectUpdate>;
