import type { Knex } from 'knex';
import {
  MessagesTableName,
  RunEventsTableName,
  RunsTableName,
  TERMINAL_STATUSES,
  ThreadSummariesTableName,
  type DbRun,
} from '../db/tables/index.js';
import type { ToolCall } from '../llm/types.js';

/** What a cancelled call answers the model, so the transcript stays valid for every vendor. */
export const CANCELLED_CALL_OUTPUT =
  'cancelled: the run was cancelled before this tool call returned a result';

/** A tool call of the run's stored answers that has no result. */
export interface DanglingCall {
  step: number;
  call: ToolCall;
}

/** How a cancelled run is closed on its row. */
export interface CancelClose {
  output: DbRun['output'];
  toolCalls: Array<Record<string, unknown>>;
  rolledBack: boolean;
  /** Why it was cancelled when no one asked (a wait that timed out); null otherwise. */
  error?: { code: string; message: string } | null;
}

/**
 * The writes of a cancelled turn (POST /runs/{id}/cancel), each inside the
 * caller's transaction with the run locked: keeping what the turn produced
 * (`interrupt`) or removing it from the conversation (`rollback`). Knex only;
 * the rules are in activities/session/cancel.ts.
 */
export class RunCancelRepository {
  /** The text each step streamed to readers (since its last restart), by step. */
  async streamedText(runId: string, trx: Knex.Transaction): Promise<Map<number, string>> {
    const rows = await trx(RunEventsTableName)
      .where({ run_id: runId })
      .whereIn('type', ['message.delta', 'message.restarted'])
      .orderBy('seq')
      .select<Array<{ type: string; data: { step?: number; text?: string } }>>('type', 'data');
    const text = new Map<number, string>();
    for (const r of rows) {
      const step = Number(r.data.step ?? 0);
      text.set(step, r.type === 'message.restarted' ? '' : (text.get(step) ?? '') + (r.data.text ?? ''));
    }
    return text;
  }

  /** The steps that stored an answer. */
  async answeredSteps(runId: string, trx: Knex.Transaction): Promise<Set<number>> {
    const rows = await trx(MessagesTableName)
      .where({ run_id: runId, role: 'assistant' })
      .select<Array<{ step_key: string }>>('step_key');
    return new Set(rows.map((r) => Number(r.step_key.split('.')[0])));
  }

  /** A step's answer cut short: the text readers saw, marked cancelled. Once per step. */
  async storePartialAnswer(
    run: Pick<DbRun, 'id' | 'thread_id' | 'trace_id'>,
    step: number,
    text: string,
    trx: Knex.Transaction,
  ): Promise<void> {
    await trx(MessagesTableName)
      .insert({
        thread_id: run.thread_id,
        run_id: run.id,
        step_key: `${step}.assistant`,
        role: 'assistant',
        content: JSON.stringify(text),
        trace_id: run.trace_id,
        metadata: JSON.stringify({ cancelled: true }),
      })
      .onConflict(trx.raw('(run_id, step_key) where run_id is not null'))
      .ignore();
  }

  /** Calls of the run's answers without a stored result, in order. */
  async danglingCalls(runId: string, trx: Knex.Transaction): Promise<DanglingCall[]> {
    const rows = await trx(MessagesTableName)
      .where({ run_id: runId })
      .orderBy('seq')
      .select<Array<{ role: string; step_key: string; tool_calls: ToolCall[] | null }>>(
        'role',
        'step_key',
        'tool_calls',
      );
    const answered = new Set(rows.filter((r) => r.role === 'tool').map((r) => r.step_key));
    return rows
      .filter((r) => r.role === 'assistant')
      .flatMap((r) => {
        const step = Number(r.step_key.split('.')[0]);
        return (r.tool_calls ?? [])
          .filter((c) => !answered.has(`${step}.tool.${c.id}`))
          .map((call) => ({ step, call }));
      });
  }

  /** The "cancelled" result of a call that has none (returns false when one was stored meanwhile). */
  async storeCancelledResult(
    run: Pick<DbRun, 'id' | 'thread_id'>,
    { step, call }: DanglingCall,
    trx: Knex.Transaction,
  ): Promise<boolean> {
    const inserted = await trx(MessagesTableName)
      .insert({
        thread_id: run.thread_id,
        run_id: run.id,
        step_key: `${step}.tool.${call.id}`,
        role: 'tool',
        content: JSON.stringify(CANCELLED_CALL_OUTPUT),
        tool_call_id: call.id,
        metadata: JSON.stringify({ tool_name: call.name, is_error: true, cancelled: true }),
      })
      .onConflict(trx.raw('(run_id, step_key) where run_id is not null'))
      .ignore()
      .returning('id');
    return inserted.length > 0;
  }

  /** Removes the run's messages (its user message too), summaries and events from the conversation. */
  async removeFromConversation(runId: string, trx: Knex.Transaction): Promise<void> {
    await this.removeMessages([runId], trx);
    // last_event_seq stays: readers following the run get the next event (run.cancelled) after what they had.
    await trx(RunEventsTableName).where({ run_id: runId }).delete();
  }

  /**
   * The sub-agent runs under a run being rolled back, at any depth, that
   * ended without being rolled back themselves: their turns leave their
   * conversations (messages, summaries) and they are marked `rolled_back`.
   * Their status, output and events stay, the record of what they did. Runs
   * that have not ended are left to their own cancel. Returns their ids.
   */
  async rollBackSubAgentTurns(runId: string, trx: Knex.Transaction): Promise<string[]> {
    const { rows } = await trx.raw<{ rows: Array<{ id: string }> }>(
      `with recursive below(id, depth) as (
         select id, 1 from runs where parent_run_id = :runId
         union all
         select r.id, below.depth + 1 from runs r join below on r.parent_run_id = below.id where below.depth < 64
       )
       select r.id from runs r join below on below.id = r.id
        where r.status = any(:ended::text[]) and not r.rolled_back
        order by r.created_at, r.id
        for update of r`,
      { runId, ended: [...TERMINAL_STATUSES] },
    );
    const ids = rows.map((r) => r.id);
    if (!ids.length) return [];
    await this.removeMessages(ids, trx);
    await trx(RunsTableName).whereIn('id', ids).update({ rolled_back: true });
    return ids;
  }

  private async removeMessages(runIds: string[], trx: Knex.Transaction): Promise<void> {
    // The thread's last prompt size measured the removed turn: unknown now (the summarizer estimates it).
    await trx('threads')
      .whereIn('id', trx(RunsTableName).select('thread_id').whereIn('id', runIds))
      .update({ last_input_tokens: null });
    await trx(ThreadSummariesTableName).whereIn('run_id', runIds).delete();
    await trx(MessagesTableName).whereIn('run_id', runIds).delete();
  }

  /** Closes the run as cancelled (nothing waits for approval any more). */
  async close(runId: string, close: CancelClose, trx: Knex.Transaction): Promise<void> {
    await trx(RunsTableName)
      .where({ id: runId })
      .update({
        status: 'cancelled',
        output: close.output ? JSON.stringify(close.output) : null,
        tool_calls: JSON.stringify(close.toolCalls),
        pending_approvals: null,
        rolled_back: close.rolledBack,
        pause: null,
        ...(close.error ? { error: JSON.stringify(close.error) } : {}),
        finished_at: trx.fn.now(),
      });
  }
}
