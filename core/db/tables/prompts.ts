import type { Knex } from 'knex';
import type { Timestamp } from './columns.js';

export const PromptsTableName = 'prompts';

export type DbPrompt = {
  id: string;
  project_id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
};
export type DbPromptInsert = Pick<DbPrompt, 'project_id' | 'name'>;
export type DbPromptUpdate = Partial<Pick<DbPrompt, 'name'>> & { updated_at?: Timestamp };

export type PromptsTable = Knex.CompositeTableType<DbPrompt, DbPromptInsert, DbPromptUpdate>;
