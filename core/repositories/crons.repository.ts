import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { CronsTableName, type DbCron, type DbCronInsert, type DbCronUpdate } from '../db/tables/index.js';
import type { Page } from './types.js';

/** Which crons a search or a count takes. */
export interface CronFilter {
  projectId: string;
  agentId?: string;
  /** The conversation's client id (the Agent Protocol's thread_id). */
  conversationId?: string;
  /** Each key-value pair must be in the cron's metadata. */
  metadata?: Record<string, unknown>;
  /** true: not paused; false: paused. */
  enabled?: boolean;
}

export const CRON_SORT_COLUMNS = {
  cron_id: 'id',
  assistant_id: 'agent_id',
  thread_id: 'conversation_id',
  created_at: 'created_at',
  updated_at: 'updated_at',
  next_run_date: 'next_run_date',
} as const;
export type CronSortBy = keyof typeof CRON_SORT_COLUMNS;

export interface CronSort {
  by: CronSortBy;
  order: 'asc' | 'desc';
}

/** Crons. Knex only. */
export class CronsRepository {
  constructor(readonly db: Db) {}

  async insert(row: DbCronInsert): Promise<DbCron> {
    const [created] = await this.db(CronsTableName).insert(row).returning('*');
    return created!;
  }

  /** The cron, in the project when one is given. */
  findById(id: string, projectId?: string): Promise<DbCron | undefined> {
    const q = this.db(CronsTableName).where({ id });
    if (projectId !== undefined) q.andWhere({ project_id: projectId });
    return q.first();
  }

  private filtered(f: CronFilter): Knex.QueryBuilder {
    const q = this.db(CronsTableName).where({ project_id: f.projectId });
    if (f.agentId !== undefined) q.andWhere({ agent_id: f.agentId });
    if (f.conversationId !== undefined) q.andWhere({ conversation_id: f.conversationId });
    if (f.enabled !== undefined) q.andWhere({ paused: !f.enabled });
    if (f.metadata) q.andWhereRaw('metadata @> ?::jsonb', [JSON.stringify(f.metadata)]);
    return q;
  }

  search(f: CronFilter, page: Page, sort: CronSort): Promise<DbCron[]> {
    const column = CRON_SORT_COLUMNS[sort.by];
    return this.filtered(f)
      .orderByRaw(`${column} ${sort.order} nulls last, id ${sort.order}`)
      .limit(page.limit)
      .offset(page.offset) as Promise<DbCron[]>;
  }

  async count(f: CronFilter): Promise<number> {
    const row = (await this.filtered(f).count({ n: '*' }).first()) as { n: string | number } | undefined;
    return Number(row?.n ?? 0);
  }

  async update(id: string, patch: DbCronUpdate): Promise<DbCron | undefined> {
    const [row] = await this.db(CronsTableName)
      .where({ id })
      .update({ ...patch, updated_at: this.db.fn.now() })
      .returning('*');
    return row;
  }

  /** Written by the worker after each run: not an edit, so `updated_at` stays. */
  async setNextRunDate(id: string, next: Date | null): Promise<void> {
    await this.db(CronsTableName).where({ id }).update({ next_run_date: next });
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db(CronsTableName).where({ id }).delete()) > 0;
  }

  /** The crons of an agent or of a conversation (their schedules go when it goes). */
  async idsOf(owner: { agentId: string } | { conversationPk: string }): Promise<string[]> {
    const where =
      'agentId' in owner ? { agent_id: owner.agentId } : { conversation_pk: owner.conversationPk };
    const rows = await this.db(CronsTableName).where(where).select('id');
    return rows.map((r) => r.id);
  }
}
