import type { Knex } from 'knex';
import type { JsonText } from './columns.js';

export const RunEventsTableName = 'run_events';

export type RunEventType =
  | 'run.created'
  | 'run.started'
  | 'message.delta'
  | 'message.restarted'
  | 'tool_call.created'
  | 'tool_call.started'
  | 'tool_call.progress'
  | 'tool_call.completed'
  | 'run.paused'
  | 'run.resumed'
  | 'message.completed'
  | 'run.completed'
  | 'run.failed'
  | 'run.cancelled';

/** The events that end a run's stream. */
export const TERMINAL_EVENTS: ReadonlySet<string> = new Set(['run.completed', 'run.failed', 'run.cancelled']);

/** A run's event log (what the converse stream replays), numbered 1, 2, 3 … per run. */
export type DbRunEvent = {
  run_id: string;
  seq: number;
  type: RunEventType;
  data: Record<string, unknown>;
  /** Events that must be written once even if their activity retries carry a key. */
  key: string | null;
  created_at: Date;
};
export type DbRunEventInsert = Pick<DbRunEvent, 'run_id' | 'seq' | 'type'> & {
  data: DbRunEvent['data'] | JsonText;
  key?: string | null;
};
export type DbRunEventUpdate = Partial<DbRunEventInsert>;

export type RunEventsTable = Knex.CompositeTableType<DbRunEvent, DbRunEventInsert, DbRunEventUpdate>;
