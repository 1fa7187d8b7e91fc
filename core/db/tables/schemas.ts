import type { Knex } from 'knex';
import type { JsonText, Timestamp } from './columns.js';

export const SchemasTableName = 'schemas';

export type DbSchema = {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  /** A JSON Schema (an object). */
  schema: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
};
export type DbSchemaInsert = Pick<DbSchema, 'project_id' | 'name'> &
  Partial<Pick<DbSchema, 'description'>> & { schema: DbSchema['schema'] | JsonText };
export type DbSchemaUpdate = Partial<Pick<DbSchema, 'name' | 'description'>> & {
  schema?: DbSchema['schema'] | JsonText;
  updated_at?: Timestamp;
};

export type SchemasTable = Knex.CompositeTableType<DbSchema, DbSchemaInsert, DbSchemaUpdate>;
