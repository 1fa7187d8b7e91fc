import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { deleteInChunks } from '../db/prune.js';
import {
  MessagesTableName,
  RunEventsTableName,
  type DbRun,
  type DbRunEvent,
  type RunEventType,
  type RunUsage,
} from '../db/tables/index.js';

/**
 * Runs' event logs, shared by the API (which streams them) and the session
 * activities (which write them), with the writes that announce an event as
 * they store what it tells of: a step's answer, a tool's result. Postgres
 * is the truth; NOTIFY only wakes readers, so a reader on any replica that
 * missed a notification still catches up from the table.
 */

/** Readers LISTEN here; payload `{"r": run id, "s": seq, "t": type, "d": data?}` (data left out when large). */
export const RUN_EVENTS_CHANNEL = 'agent_server_run_events';

/** An event as readers get it. */
export type RunEvent = Pick<DbRunEvent, 'seq' | 'type' | 'data'>;

/** An event written with a step's answer (see `storeStep`); with a `key`, at most once per run. */
export interface StepEvent {
  type: RunEventType;
  data: Record<string, unknown>;
  key?: string;
}

export interface StoredStep {
  runId: string;
  threadId: string;
  /** e.g. "1.assistant": a retried attempt finds its row and writes nothing. */
  stepKey: string;
  message: {
    content: string;
    tool_calls: unknown[] | null;
    usage: RunUsage;
    prompt_version_id: string | null;
    trace_id: string | null;
    hidden: boolean;
    metadata: Record<string, unknown>;
  };
  /** Added to the run's usage. */
  usage: RunUsage;
  /** What the step's model call cost (undefined when no price or no usage is known); added to the run's cost. */
  costUsd: number | undefined;
  /** The provider reported the usage: the thread's last input tokens are updated. */
  reported: boolean;
  /** The answer ends the turn: the run is completed with this output and these tool calls. */
  final: { output: DbRun['output']; toolCalls: Array<Record<string, unknown>> } | undefined;
  /** A hidden corrective user message to store after the answer (structured-output retry). */
  correction: { stepKey: string; content: string } | undefined;
  /**
   * In order. `message.completed` gets the stored message's id and
   * `run.completed` the run's usage after this step, both filled in here.
   */
  events: StepEvent[];
}

/** A tool call's result, stored as the step's tool message. */
export interface ToolResult {
  runId: string;
  threadId: string;
  step: number;
  call: { id: string; name: string };
  output: string;
  isError: boolean;
  /** Extra fields for the event and the message's metadata (e.g. the sandbox's exit code). */
  details?: Record<string, unknown>;
}

/** A summary of the thread's older turns, made by a model call of the run (see `storeSummary`). */
export interface StoredSummary {
  runId: string;
  threadId: string;
  /** The last message seq the summary covers. */
  throughSeq: number;
  content: string;
  /** The summarizer call's tokens, as the provider reported them (null when it did not); added to the run's. */
  usage: RunUsage | null;
  /** What the call cost (undefined when no price or no usage is known); added to the run's cost. */
  costUsd: number | undefined;
}

type Conn = Db | Knex.Transaction;

/**
 * The run's usage with one model call's added (named parameters `:in`,
 * `:out`, `:cache_read`, `:cache_write`, `:cost`): tokens summed, and
 * `cost_usd` the sum of the priced calls' costs, left out while no call
 * was priced (`:cost` null).
 */
const ADD_RUN_USAGE = `jsonb_strip_nulls(jsonb_build_object(
    'input_tokens', coalesce((usage->>'input_tokens')::bigint, 0) + :in,
    'output_tokens', coalesce((usage->>'output_tokens')::bigint, 0) + :out,
    'cache_read_tokens', nullif(coalesce((usage->>'cache_read_tokens')::bigint, 0) + :cache_read, 0),
    'cache_write_tokens', nullif(coalesce((usage->>'cache_write_tokens')::bigint, 0) + :cache_write, 0),
    'cost_usd', case when :cost::numeric is null then usage->'cost_usd'
                     else to_jsonb(coalesce((usage->>'cost_usd')::numeric, 0) + :cost::numeric) end))`;

/** The bindings of ADD_RUN_USAGE for a call's tokens and cost. */
function usageBindings(usage: RunUsage | null, costUsd: number | undefined) {
  return {
    in: usage?.input_tokens ?? 0,
    out: usage?.output_tokens ?? 0,
    cache_read: usage?.cache_read_tokens ?? 0,
    cache_write: usage?.cache_write_tokens ?? 0,
    cost: costUsd ?? null,
  };
}

/** Notification payloads stay under Postgres's 8000-byte limit; larger data is read from the table. */
const MAX_INLINE_DATA = 6_000;

/** Knex only; methods that take `conn` run inside the caller's transaction. */
export class RunEventsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Appends one event with the run's next sequence number and notifies
   * readers when the statement commits. With a `key`, the event is written
   * at most once per run (a retried activity re-announcing a tool call
   * writes nothing): returns the new seq, or null when the keyed event
   * already exists.
   */
  async append(
    runId: string,
    type: RunEventType,
    data: Record<string, unknown>,
    key?: string,
    conn: Conn = this.db,
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

  /** The run's events after `afterSeq`, in order, at most `limit`. */
  /** Whether the run has the event written under `key` (an announcement an earlier attempt made). */
  async has(runId: string, key: string): Promise<boolean> {
    return Boolean(await this.db('run_events').where({ run_id: runId, key }).first('seq'));
  }

  async read(runId: string, afterSeq: number, limit = 1_000): Promise<RunEvent[]> {
    return this.db(RunEventsTableName)
      .where('run_id', runId)
      .andWhere('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .select('seq', 'type', 'data');
  }

  /** A step's `message.delta` and `message.restarted` events, in order. */
  async stepText(
    runId: string,
    step: number,
  ): Promise<Array<{ type: RunEventType; data: { text?: string } }>> {
    return this.db(RunEventsTableName)
      .where({ run_id: runId })
      .whereIn('type', ['message.delta', 'message.restarted'])
      .whereRaw(`(data->>'step')::int = ?`, [step])
      .orderBy('seq')
      .select<Array<{ type: RunEventType; data: { text?: string } }>>('type', 'data');
  }

  /**
   * A model step's outcome as one statement (atomic without a transaction's
   * round trips): the assistant message, the run's usage (and, for the final
   * answer, its completion), the thread's input tokens, an optional
   * correction message, and the step's events with consecutive sequence
   * numbers, each announced to readers on commit in order. Writes nothing when
   * an earlier attempt stored the step. Returns the message id it stored.
   */
  async storeStep(step: StoredStep): Promise<string | undefined> {
    const { rows } = await this.db.raw<{ rows: Array<{ id: string }> }>(
      `with msg as (
         insert into messages (thread_id, run_id, step_key, role, content, tool_calls, usage,
                               prompt_version_id, trace_id, hidden, metadata)
         values (:thread, :run, :step_key, 'assistant', :content::jsonb, :tool_calls::jsonb, :usage::jsonb,
                 :prompt_version, :trace, :hidden, :metadata::jsonb)
         on conflict (run_id, step_key) where run_id is not null do nothing
         returning id
       ), r as (
         update runs set usage = ${ADD_RUN_USAGE},
           status = case when :final then 'completed' else status end,
           output = case when :final then :output::jsonb else output end,
           tool_calls = case when :final then :calls::jsonb else tool_calls end,
           finished_at = case when :final then now() else finished_at end,
           last_event_seq = last_event_seq + :n
          where id = :run and exists (select 1 from msg)
         returning usage, last_event_seq
       ), t as (
         update threads set last_input_tokens = :in
          where id = :thread and :reported and exists (select 1 from msg)
       ), corr as (
         insert into messages (thread_id, run_id, step_key, role, content, hidden, metadata)
         select :thread, :run, :corr_key::text, 'user', :corr_content::jsonb, true,
                '{"kind":"schema_correction"}'::jsonb
           from msg where :corr_key::text is not null
       ), ev as (
         insert into run_events (run_id, seq, type, data, key)
         select :run, r.last_event_seq - :n + x.ord, x.ev->>'type',
                case x.ev->>'type'
                  when 'message.completed' then (x.ev->'data') || jsonb_build_object('message_id', msg.id)
                  when 'run.completed' then (x.ev->'data') || jsonb_build_object('usage', r.usage)
                  else x.ev->'data' end,
                x.ev->>'key'
           from r, msg, jsonb_array_elements(:events::jsonb) with ordinality as x(ev, ord)
         returning seq, type, data
       )
       select msg.id,
              (select count(*) from (
                 select pg_notify(:channel, json_build_object('r', :run::text, 's', seq, 't', type,
                          'd', case when length(data::text) <= :max_inline then data end)::text)
                   from ev order by seq) n) as notified
         from msg`,
      {
        thread: step.threadId,
        run: step.runId,
        step_key: step.stepKey,
        content: JSON.stringify(step.message.content),
        tool_calls: step.message.tool_calls ? JSON.stringify(step.message.tool_calls) : null,
        usage: JSON.stringify(step.message.usage),
        prompt_version: step.message.prompt_version_id,
        trace: step.message.trace_id,
        hidden: step.message.hidden,
        metadata: JSON.stringify(step.message.metadata),
        ...usageBindings(step.usage, step.costUsd),
        final: step.final !== undefined,
        output: JSON.stringify(step.final?.output ?? null),
        calls: JSON.stringify(step.final?.toolCalls ?? []),
        n: step.events.length,
        reported: step.reported,
        corr_key: step.correction?.stepKey ?? null,
        corr_content: step.correction ? JSON.stringify(step.correction.content) : null,
        events: JSON.stringify(step.events),
        channel: RUN_EVENTS_CHANNEL,
        max_inline: MAX_INLINE_DATA,
      },
    );
    return rows[0]?.id;
  }

  /**
   * Stores the summary once per run and adds its model call's usage to the
   * run's, in one statement: a retried activity that finds the summary
   * stored adds nothing. Returns whether it stored it.
   */
  async storeSummary(summary: StoredSummary): Promise<boolean> {
    const { rows } = await this.db.raw<{ rows: Array<{ stored: number }> }>(
      `with s as (
         insert into thread_summaries (thread_id, run_id, through_seq, content, usage)
         values (:thread, :run, :through, :content, :usage::jsonb)
         on conflict (run_id) where run_id is not null do nothing
         returning 1
       ), r as (
         update runs set usage = ${ADD_RUN_USAGE}
          where id = :run and exists (select 1 from s)
       )
       select count(*)::int as stored from s`,
      {
        thread: summary.threadId,
        run: summary.runId,
        through: summary.throughSeq,
        content: summary.content,
        usage: summary.usage ? JSON.stringify(summary.usage) : null,
        ...usageBindings(summary.usage, summary.costUsd),
      },
    );
    return rows[0]!.stored > 0;
  }

  /**
   * Stores a tool call's result as the step's tool message and announces it
   * (`tool_call.completed`), once: a retried activity that finds the message
   * already stored writes nothing and gets false.
   */
  async storeToolResult(result: ToolResult): Promise<boolean> {
    const { runId, step, call } = result;
    const key = `${step}.tool.${call.id}`;
    return this.db.transaction(async (trx) => {
      const inserted = await trx(MessagesTableName)
        .insert({
          thread_id: result.threadId,
          run_id: runId,
          step_key: key,
          role: 'tool',
          content: JSON.stringify(result.output),
          tool_call_id: call.id,
          metadata: JSON.stringify({ tool_name: call.name, is_error: result.isError, ...result.details }),
        })
        .onConflict(trx.raw('(run_id, step_key) where run_id is not null'))
        .ignore()
        .returning('id');
      if (!inserted.length) return false;
      await this.append(
        runId,
        'tool_call.completed',
        {
          step,
          id: call.id,
          name: call.name,
          output: result.output,
          is_error: result.isError,
          ...result.details,
        },
        `${key}.completed`,
        trx,
      );
      return true;
    });
  }

  /**
   * Run events are for following and resuming a run's stream; the run row and
   * the messages are its record. Events of runs that finished more than
   * `retentionDays` ago are deleted, except each run's terminal event, so a
   * late replay still ends with the run's outcome. In chunks, one replica at a
   * time (a transaction-level advisory lock; the others skip that round).
   */
  prune(retentionDays: number, chunk = 10_000): Promise<number> {
    const cutoff = new Date(Date.now() - retentionDays * 86_400_000);
    return deleteInChunks(
      this.db,
      'agent-server:prune-run-events',
      `delete from run_events where ctid in (
         select e.ctid from run_events e join runs r on r.id = e.run_id
          where r.finished_at < ? and e.type not in ('run.completed', 'run.failed', 'run.cancelled')
          limit ?)`,
      [cutoff],
      chunk,
    );
  }
}
