import type { Knex } from 'knex';
import type { Db } from '../../api/db/knex.js';

/**
 * Runs and their event log, shared by the API (which creates a run and
 * streams its events) and the session activities (which write them).
 * Postgres is the truth; NOTIFY only wakes readers, so a reader on any
 * replica that missed a notification still catches up from the table.
 */

/** Readers LISTEN here; payload `{"r": run id, "s": seq, "t": type, "d": data?}` (data left out when large). */
export const RUN_EVENTS_CHANNEL = 'agent_server_run_events';

export type RunStatus = 'queued' | 'running' | 'awaiting_approval' | 'completed' | 'failed' | 'cancelled';
export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set(['completed', 'failed', 'cancelled']);
export const TERMINAL_EVENTS: ReadonlySet<string> = new Set(['run.completed', 'run.failed', 'run.cancelled']);

export type RunEventType =
  | 'run.created'
  | 'run.started'
  | 'message.delta'
  | 'message.restarted'
  | 'tool_call.created'
  | 'tool_call.completed'
  | 'message.completed'
  | 'run.completed'
  | 'run.failed'
  | 'run.cancelled';

export interface RunEvent {
  seq: number;
  type: RunEventType;
  data: Record<string, unknown>;
}

export interface TurnError {
  code: string;
  message: string;
  details?: unknown;
}

export interface DbRun {
  id: string;
  project_id: string;
  conversation_pk: string;
  thread_id: string;
  agent_id: string | null;
  message_id: string;
  request_hash: string;
  status: RunStatus;
  workflow_id: string;
  trace_id: string | null;
  prompt_version_id: string | null;
  output: { role: 'assistant'; content: string; structured?: unknown } | null;
  tool_calls: Array<Record<string, unknown>>;
  usage: { input_tokens: number; output_tokens: number };
  error: TurnError | null;
  warnings: string[];
  plan: Record<string, unknown> | null;
  last_event_seq: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

type Conn = Db | Knex.Transaction;

/** Notification payloads stay under Postgres's 8000-byte limit; larger data is read from the table. */
const MAX_INLINE_DATA = 6_000;

/**
 * Appends one event with the run's next sequence number and notifies readers
 * when the statement commits. With a `key`, the event is written at most
 * once per run (a retried activity re-announcing a tool call writes nothing):
 * returns the new seq, or null when the keyed event already exists.
 */
export async function appendRunEvent(
  conn: Conn,
  runId: string,
  type: RunEventType,
  data: Record<string, unknown>,
  key?: string,
): Promise<number | null> {
  const json = JSON.stringify(data);
  const inline = json.length <= MAX_INLINE_DATA;
  try {
    const { rows } = await conn.raw<{ rows: Array<{ seq: number }> }>(
      `with s as (
         update runs set last_event_seq = last_event_seq + 1
          where id = :run
            and (:key::text is null or not exists (select 1 from run_events e where e.run_id = :run and e.key = :key::text))
         returning last_event_seq as seq
       ), ins as (
         insert into run_events (run_id, seq, type, data, key)
         select :run, seq, :type, :data::jsonb, :key::text from s
         returning seq
       )
       select seq, pg_notify(:channel, json_build_object('r', :run::text, 's', seq, 't', :type::text, 'd', case when :inline then :data::json end)::text)
         from ins`,
      { run: runId, key: key ?? null, type, data: json, inline, channel: RUN_EVENTS_CHANNEL },
    );
    return rows[0]?.seq ?? null;
  } catch (err) {
    // Two writers of the same keyed event at once: the unique index keeps one.
    if (key && (err as { code?: string }).code === '23505') return null;
    throw err;
  }
}

export async function readRunEvents(
  conn: Conn,
  runId: string,
  afterSeq: number,
  limit = 1_000,
): Promise<RunEvent[]> {
  return conn('run_events')
    .where('run_id', runId)
    .andWhere('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .select('seq', 'type', 'data') as Promise<RunEvent[]>;
}

export async function findRun(conn: Conn, runId: string): Promise<DbRun | undefined> {
  return (await conn('runs').where({ id: runId }).first()) as DbRun | undefined;
}

export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}
