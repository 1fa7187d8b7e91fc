import type { Knex } from 'knex';
import type { JsonText, Timestamp } from './columns.js';

export const CronsTableName = 'crons';

/** What a cron's schedule does when a run is due while the previous one still runs (Temporal's overlap policies). */
export const CRON_OVERLAP_POLICIES = [
  'skip',
  'buffer_one',
  'buffer_all',
  'cancel_other',
  'terminate_other',
  'allow_all',
] as const;
export type CronOverlapPolicy = (typeof CRON_OVERLAP_POLICIES)[number];

export const CRON_RUN_COMPLETED = ['delete', 'keep'] as const;
export type CronRunCompleted = (typeof CRON_RUN_COMPLETED)[number];

/** What each of the cron's runs is started with, as the Agent Protocol sent it. */
export type CronPayload = {
  input?: unknown;
  context?: Record<string, unknown>;
  config?: Record<string, unknown>;
};

/** A turn an agent runs on a schedule; its timing is the Temporal Schedule `cron/<id>`. */
export type DbCron = {
  id: string;
  project_id: string;
  agent_id: string;
  /** Null: each run starts a new conversation. */
  conversation_pk: string | null;
  conversation_id: string | null;
  /** A cron expression (five fields, or `@daily` and the like). */
  schedule: string;
  /** IANA name the schedule is read in. */
  timezone: string;
  end_time: Date | null;
  payload: CronPayload;
  /** The user message each run sends (a string or content parts), from the payload's input. */
  message: string | Array<Record<string, unknown>>;
  metadata: Record<string, unknown>;
  overlap_policy: CronOverlapPolicy;
  /** Without a conversation: `delete` removes each run's new conversation once the run ends; null on a conversation. */
  on_run_completed: CronRunCompleted | null;
  paused: boolean;
  /** As the schedule last said; null while paused or once it has no run left. */
  next_run_date: Date | null;
  created_at: Date;
  updated_at: Date;
};

export type DbCronInsert = Pick<
  DbCron,
  'project_id' | 'agent_id' | 'conversation_pk' | 'conversation_id' | 'schedule' | 'timezone' | 'end_time'
> & {
  id?: string;
  payload: JsonText;
  message: JsonText;
  metadata: JsonText;
  overlap_policy?: CronOverlapPolicy;
  on_run_completed?: CronRunCompleted | null;
  paused?: boolean;
};

export type DbCronUpdate = Partial<
  Pick<
    DbCron,
    'schedule' | 'timezone' | 'end_time' | 'overlap_policy' | 'on_run_completed' | 'paused' | 'next_run_date'
  >
> & {
  payload?: JsonText;
  message?: JsonText;
  metadata?: JsonText;
  updated_at?: Timestamp;
};

export type CronsTable = Knex.CompositeTableType<DbCron, DbCronInsert, DbCronUpdate>;

declare module 'knex/types/tables.js' {
  interface Tables {
    crons: CronsTable;
  }
}
