import type { Knex } from 'knex';

export const PromptVersionsTableName = 'prompt_versions';

/** Versions are written once; a label (prompt_labels) says which one is in use. */
export type DbPromptVersion = {
  id: string;
  prompt_id: string;
  version: number;
  template: string;
  commit_message: string;
  created_at: Date;
};
export type DbPromptVersionInsert = Pick<
  DbPromptVersion,
  'prompt_id' | 'version' | 'template' | 'commit_message'
>;
export type DbPromptVersionUpdate = Partial<DbPromptVersionInsert>;

export type PromptVersionsTable = Knex.CompositeTableType<
  DbPromptVersion,
  DbPromptVersionInsert,
  DbPromptVersionUpdate
>;
