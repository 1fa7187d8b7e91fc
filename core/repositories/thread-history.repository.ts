import type { Db } from '../db/knex.js';
import {
  ThreadSummariesTableName,
  ThreadsTableName,
  type DbMessage,
  type DbThreadSummary,
  type RunStatus,
} from '../db/tables/index.js';
import type { ToolCall } from '../llm/types.js';

const MESSAGE_COLUMNS = ['id', 'seq', 'run_id', 'role', 'content', 'tool_calls', 'tool_call_id', 'hidden'];

/** A thread message with its run's place in the session (see activities/session/context.ts). */
export type ThreadMessageRow = Pick<
  DbMessage,
  'id' | 'seq' | 'run_id' | 'role' | 'content' | 'tool_call_id' | 'hidden'
> & {
  tool_calls: ToolCall[] | null;
  /** When the row's run began (ms); null for a row without a run. */
  turn_at: number | null;
  run_status: RunStatus | null;
};

export type ThreadSummary = Pick<DbThreadSummary, 'content' | 'through_seq'>;

/** What a turn reads of its thread's past, and the summaries that fold it. Knex only. */
export class ThreadHistoryRepository {
  constructor(private readonly db: Db) {}

  /** Every message of the thread by seq, with when its run began and the run's status. */
  async messages(threadId: string): Promise<ThreadMessageRow[]> {
    const rows = await this.db('messages as m')
      .leftJoin('runs as r', 'r.id', 'm.run_id')
      .where('m.thread_id', threadId)
      .orderBy('m.seq')
      .select<Array<Omit<ThreadMessageRow, 'turn_at'> & { turn_at: string | null }>>(
        ...MESSAGE_COLUMNS.map((c) => `m.${c}`),
        this.db.raw('extract(epoch from coalesce(r.started_at, r.created_at)) * 1000 as turn_at'),
        'r.status as run_status',
      );
    // Postgres returns numeric turn_at as text (bigint seq is parsed: core/db/knex.ts).
    return rows.map((r) => ({ ...r, turn_at: r.turn_at != null ? Number(r.turn_at) : null }));
  }

  async latestSummary(threadId: string): Promise<ThreadSummary | undefined> {
    return this.db(ThreadSummariesTableName)
      .where({ thread_id: threadId })
      .orderBy('through_seq', 'desc')
      .first('content', 'through_seq');
  }

  /** Input tokens the provider reported on the thread's last model call (the thread must exist). */
  async lastInputTokens(threadId: string): Promise<number | null> {
    const thread = await this.db(ThreadsTableName).where({ id: threadId }).first('last_input_tokens');
    return thread!.last_input_tokens;
  }

  async hasRunSummary(runId: string): Promise<boolean> {
    return Boolean(await this.db(ThreadSummariesTableName).where({ run_id: runId }).first('id'));
  }

  /** Stores the run's summary once: a second one for the same run is ignored. */
  async insertSummary(summary: {
    threadId: string;
    runId: string;
    throughSeq: number;
    content: string;
    usage: unknown;
  }): Promise<void> {
    await this.db(ThreadSummariesTableName)
      .insert({
        thread_id: summary.threadId,
        run_id: summary.runId,
        through_seq: summary.throughSeq,
        content: summary.content,
        usage: JSON.stringify(summary.usage),
      })
      .onConflict(this.db.raw('(run_id) where run_id is not null'))
      .ignore();
  }
}
