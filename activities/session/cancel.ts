/**
 * The `cancelTurn` activity: a run stopped by POST /runs/{id}/cancel ends
 * `cancelled`, in one transaction with its `run.cancelled` event.
 *
 * - `interrupt` keeps what the turn produced: a step cut short keeps the text
 *   its readers saw (marked cancelled), and every tool call without a result
 *   is answered "cancelled", so the next turn's transcript is valid for every
 *   vendor (Anthropic refuses a tool_use without its tool_result).
 * - `rollback` removes the run's messages (its user message too), summaries
 *   and events from the conversation, as if the turn had not happened; the
 *   run row stays for audit with `rolled_back`. The turns its sub-agents
 *   already finished leave their conversations too (marked `rolled_back`,
 *   their status kept); the ones under way were cancelled the same way first.
 *
 * The workflow runs it once the turn's activities have stopped, so nothing
 * the turn wrote lands after it. A finished run is left as it is.
 */
import type { Knex } from 'knex';
import { isTerminal, type DbRun } from '../../core/db/tables/index.js';
import { BudgetsRepository } from '../../core/repositories/budgets.repository.js';
import { RunCancelRepository } from '../../core/repositories/runs-cancel.repository.js';
import { RunEventsRepository } from '../../core/repositories/run-events.repository.js';
import { TurnsRepository } from '../../core/repositories/turns.repository.js';
import type { CancelTurnArgs } from '../../workflows/session.definitions.js';
import { runCalls } from './run-outcome.js';
import type { SessionDeps } from './types.js';
import { emitRunWebhooks } from '../webhooks/run-webhooks.js';

const cancels = new RunCancelRepository();

/** Steps cut short keep the text readers saw; calls without results are answered "cancelled". */
async function keepWhatRan(db: SessionDeps['db'], run: DbRun, trx: Knex.Transaction) {
  const events = new RunEventsRepository(db);
  const answered = await cancels.answeredSteps(run.id, trx);
  for (const [step, text] of await cancels.streamedText(run.id, trx))
    if (!answered.has(step) && text.trim()) await cancels.storePartialAnswer(run, step, text, trx);
  for (const dangling of await cancels.danglingCalls(run.id, trx)) {
    if (!(await cancels.storeCancelledResult(run, dangling, trx))) continue;
    const { step, call } = dangling;
    await events.append(
      run.id,
      'tool_call.completed',
      { step, id: call.id, name: call.name, output: 'cancelled', is_error: true, cancelled: true },
      `${step}.tool.${call.id}.completed`,
      trx,
    );
  }
  const { toolCalls, lastAnswer } = await runCalls(db, run.id, trx);
  const output = lastAnswer ? { role: 'assistant' as const, content: lastAnswer } : null;
  return { output, toolCalls };
}

export function createCancelActivities(deps: SessionDeps) {
  const { db } = deps;
  const turns = new TurnsRepository(db);
  const events = new RunEventsRepository(db);
  const budgets = new BudgetsRepository(db);

  return {
    /**
     * Ends the run `cancelled` as `action` says (with `reason` as its error
     * when no one asked: a wait that timed out); a finished run is left as it is.
     */
    async cancelTurn({ runId, action, reason }: CancelTurnArgs): Promise<void> {
      await turns.transaction(async (trx) => {
        const run = await turns.lock(runId, trx);
        if (!run || isTerminal(run.status)) return;
        let outcome: { output: DbRun['output']; toolCalls: Array<Record<string, unknown>> };
        if (action === 'rollback') {
          outcome = { output: null, toolCalls: (await runCalls(db, run.id, trx)).toolCalls };
          await cancels.removeFromConversation(run.id, trx);
          // Turns its sub-agents already finished served only this one: they are undone with it.
          await cancels.rollBackSubAgentTurns(run.id, trx);
        } else outcome = await keepWhatRan(db, run, trx);
        const rolledBack = action === 'rollback';
        await cancels.close(run.id, { ...outcome, rolledBack, error: reason ?? null }, trx);
        await budgets.release(run.id, undefined, trx);
        const data = {
          status: 'cancelled',
          action,
          rolled_back: rolledBack,
          usage: run.usage,
          output: outcome.output,
        };
        await events.append(
          run.id,
          'run.cancelled',
          reason ? { ...data, error: reason } : data,
          'final',
          trx,
        );
      });
      await emitRunWebhooks(db, runId, 'run.cancelled', 'final');
    },
  };
}
