import type { Knex } from 'knex';

export const SkillFilesTableName = 'agent_skill_files';

export type DbSkillFile = {
  skill_id: string;
  /** Relative to the skill folder, '/'-separated. */
  path: string;
  content: Buffer;
  size: number;
  executable: boolean;
};
export type DbSkillFileInsert = Omit<DbSkillFile, 'executable'> & Partial<Pick<DbSkillFile, 'executable'>>;
export type DbSkillFileUpdate = Partial<DbSkillFileInsert>;

export type SkillFilesTable = Knex.CompositeTableType<DbSkillFile, DbSkillFileInsert, DbSkillFileUpdate>;
