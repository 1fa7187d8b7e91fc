import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import {
  AgentsTableName,
  SkillFilesTableName,
  SkillsTableName,
  type DbAgent,
  type DbSkill,
  type DbSkillFile,
  type DbSkillWrite,
} from '../db/tables/index.js';
import type { Page } from './types.js';

export type DbSkillFileMeta = Omit<DbSkillFile, 'skill_id' | 'content'>;

/** What the skill rules need to know about the owning agent. */
export type SkillOwner = Pick<DbAgent, 'id' | 'project_id' | 'sandbox'>;

type Conn = Db | Knex.Transaction;

const LOCK_CLASS = 0x736b696c; // 'skil': the advisory-lock namespace of skill materialization

export class SkillsRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(fn);
  }

  /** Runs `fn` in a transaction holding the agent's skill-materialization lock (writers on any host take turns). */
  withMaterializeLock<T>(agentId: string, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(?, hashtext(?))', [LOCK_CLASS, agentId]);
      return fn(trx);
    });
  }

  async owner(agentId: string, conn: Conn = this.db, forUpdate = false): Promise<SkillOwner | undefined> {
    const q = conn(AgentsTableName).where({ id: agentId }).first('id', 'project_id', 'sandbox');
    if (forUpdate) void q.forUpdate();
    return q;
  }

  async find(agentId: string, name: string, conn: Conn = this.db): Promise<DbSkill | undefined> {
    return conn(SkillsTableName).where({ agent_id: agentId, name }).first();
  }

  async count(agentId: string, conn: Conn = this.db): Promise<number> {
    const row = await conn(SkillsTableName).where({ agent_id: agentId }).count({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }

  async list(agentId: string, page: Page): Promise<DbSkill[]> {
    return this.db(SkillsTableName)
      .where({ agent_id: agentId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'name', order: 'asc' },
      ])
      .limit(page.limit)
      .offset(page.offset);
  }

  /** Every skill of the agent, by name: the worker's view (no file contents). */
  async all(agentId: string, conn: Conn = this.db): Promise<DbSkill[]> {
    return conn(SkillsTableName).where({ agent_id: agentId }).orderBy('name');
  }

  /** Inserts or replaces the skill row; `created` says which. */
  async upsert(trx: Knex.Transaction, row: DbSkillWrite): Promise<{ skill: DbSkill; created: boolean }> {
    const [result] = await trx(SkillsTableName)
      .insert(row)
      .onConflict(['agent_id', 'name'])
      .merge({
        description: row.description,
        file_count: row.file_count,
        total_bytes: row.total_bytes,
        content_hash: row.content_hash,
        updated_at: trx.fn.now(),
      })
      // xmax is 0 on a freshly inserted row version and set when the row was updated.
      .returning<Array<DbSkill & { created: boolean }>>([trx.raw('*'), trx.raw('(xmax = 0) as created')]);
    const { created, ...skill } = result!;
    return { skill, created };
  }

  async replaceFiles(trx: Knex.Transaction, skillId: string, files: Omit<DbSkillFile, 'skill_id'>[]) {
    await trx(SkillFilesTableName).where({ skill_id: skillId }).delete();
    for (let i = 0; i < files.length; i += 100) {
      await trx(SkillFilesTableName).insert(
        files.slice(i, i + 100).map((f) => ({ ...f, skill_id: skillId })),
      );
    }
  }

  async fileMeta(skillId: string): Promise<DbSkillFileMeta[]> {
    return this.db(SkillFilesTableName)
      .where({ skill_id: skillId })
      .orderBy('path')
      .select('path', 'size', 'executable');
  }

  async fileContent(skillId: string, path: string): Promise<Buffer | undefined> {
    const row = await this.db(SkillFilesTableName).where({ skill_id: skillId, path }).first('content');
    return row?.content;
  }

  /**
   * The files of a skill as of `contentHash`, read in one statement (one
   * snapshot); empty when the skill has changed or gone since the hash was read.
   */
  async files(skillId: string, contentHash?: string, conn: Conn = this.db): Promise<DbSkillFile[]> {
    const q = conn(`${SkillFilesTableName} as f`)
      .join(`${SkillsTableName} as s`, 's.id', 'f.skill_id')
      .where('f.skill_id', skillId)
      .orderBy('f.path')
      .select('f.skill_id', 'f.path', 'f.content', 'f.size', 'f.executable');
    if (contentHash !== undefined) void q.where('s.content_hash', contentHash);
    return (await q) as DbSkillFile[];
  }

  /** Gives agent `to` a copy of every skill of agent `from`, files included (a copied agent takes its skills). */
  async copyAll(trx: Knex.Transaction, from: string, to: string): Promise<void> {
    await trx.raw(
      `with src as (select * from agent_skills where agent_id = :from),
            copied as (
              insert into agent_skills (agent_id, name, description, file_count, total_bytes, content_hash)
              select :to, name, description, file_count, total_bytes, content_hash from src
              returning id, name)
       insert into agent_skill_files (skill_id, path, content, size, executable)
       select c.id, f.path, f.content, f.size, f.executable
         from copied c join src on src.name = c.name join agent_skill_files f on f.skill_id = src.id`,
      { from, to },
    );
  }

  async delete(agentId: string, name: string): Promise<boolean> {
    return (await this.db(SkillsTableName).where({ agent_id: agentId, name }).delete()) > 0;
  }
}
