import type { Knex } from 'knex';
import type { Timestamp } from './columns.js';

export const SkillsTableName = 'agent_skills';

/** A skill of an agent: what lists need, without its files (agent_skill_files). */
export type DbSkill = {
  id: string;
  agent_id: string;
  name: string;
  description: string;
  file_count: number;
  total_bytes: number;
  /** sha256 (hex) over the sorted paths, modes and contents. */
  content_hash: string;
  created_at: Date;
  updated_at: Date;
};
export type DbSkillWrite = Pick<
  DbSkill,
  'agent_id' | 'name' | 'description' | 'file_count' | 'total_bytes' | 'content_hash'
>;
export type DbSkillUpdate = Partial<Omit<DbSkillWrite, 'agent_id'>> & { updated_at?: Timestamp };

export type SkillsTable = Knex.CompositeTableType<DbSkill, DbSkillWrite, DbSkillUpdate>;
