/** Typed rows of our tables; repositories use these so queries are type-checked. */

export const ProjectsTableName = 'projects';
export interface DbProject {
  id: string;
  name: string;
  description: string | null;
  /** The virtual key that meters and limits this project's model calls. */
  virtual_key_id: string | null;
  created_at: Date;
  updated_at: Date;
}
export type DbProjectInsert = Pick<DbProject, 'name' | 'description' | 'virtual_key_id'>;
export type DbProjectUpdate = Partial<Pick<DbProject, 'name' | 'description' | 'virtual_key_id'>>;

declare module 'knex/types/tables.js' {
  interface Tables {
    projects: DbProject;
  }
}
