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
  created_at: Date;
  updated_at: Date;
};
export type DbProjectInsert = Pick<DbProject, 'name'> &
  Partial<Pick<DbProject, 'description' | 'virtual_key_id' | 'record_content'>>;
export type DbProjectUpdate = Partial<
  Pick<DbProject, 'name' | 'description' | 'virtual_key_id' | 'record_content'>
> & {
  updated_at?: Timestamp;
};

export type ProjectsTable = Knex.CompositeTableType<DbProject, DbProjectInsert, DbProjectUpdate>;
