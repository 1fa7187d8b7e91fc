/** The `callModel` activity: one model call of the turn. */
import { whileDatabaseUnavailable } from '../../core/db/unavailable.js';
import { targetOf } from '../../core/llm/provider-target.js';
import { BudgetExceededError } from '../../core/metering/errors.js';
import { BudgetsRepository } from '../../core/repositories/budgets.repository.js';
import { StepMessagesRepository } from '../../core/repositories/step-messages.repository.js';
import { ThreadHistoryRepository } from '../../core/repositories/thread-history.repository.js';
import type { ModelStepResult } from '../../workflows/session.definitions.js';
import { alertKeyBudget, callNeed, holdScopeBudgets, keyShortfall } from './budgets.js';
import { messageText } from './context.js';
import { nonRetryable } from './failures.js';
import { threadMessages } from './history.js';
import { startModelCall } from './metered-call.js';
import { turnRequest } from './model-request.js';
import { streamAnswer } from './model-stream.js';
import { recordStep } from './step-record.js';
import { stepResult } from './step-result.js';
import { runToolsRecord, sandboxState, toolDefinitions, type RunTools } from './tools.js';
import { heartbeating } from './turn-run.js';
import { startStep } from './turn-start.js';
import type { SessionDeps } from './types.js';

/** How long a model call's answer waits for an unreachable database before the activity fails. */
const RECORD_WAIT_MS = 120_000;

export function createModelCallActivities(deps: SessionDeps) {
  const steps = new StepMessagesRepository(deps.db);
  const history = new ThreadHistoryRepository(deps.db);
  const budgets = new BudgetsRepository(deps.db);

  return {
    /**
     * One model call of the turn, streamed: text deltas become run events as
     * they arrive; the answer is stored as the step's assistant message. A
     * retry of a step whose answer is already stored returns it without
     * calling the model again.
     */
    async callModel(runId: string, step: number, summarized = false): Promise<ModelStepResult> {
      const start = await startStep(deps, runId, step, summarized);
      if (start.kind === 'result') return start.result;
      const { row, pinning } = start;
      const runTools =
        (row.tools as RunTools | null) ??
        runToolsRecord(sandboxState(start.plan), undefined, start.plan.memory_tools, start.plan.sub_agents);
      if (!row.j_provider) throw nonRetryable('provider_not_found', `the model's provider no longer exists`);
      const provider = row.j_provider;
      const target = targetOf(provider, deps.secrets);
      const turnPlan = start.plan;
      // Independent statements go out together: this runs on the turn's critical path.
      const offered = toolDefinitions(runTools);
      const [pinned, stored, rows, summary] = await Promise.all([
        pinning ?? Promise.resolve(turnPlan),
        steps.answer(runId, step),
        threadMessages(history, turnPlan.thread_id, runId),
        turnPlan.summarizer_type === 'llm' && turnPlan.enable_history
          ? history.latestSummary(turnPlan.thread_id)
          : Promise.resolve(undefined),
      ]);
      // A concurrent first attempt may have pinned its own plan: go on with that one.
      const plan = pinned;
      if (stored) return stepResult(plan, runTools, messageText(stored.content), stored.tool_calls ?? []);

      const req = turnRequest(plan, runId, rows, summary, offered);
      const waiting = await holdScopeBudgets(deps, row, step, provider.id, req, row.j_budgets);
      if (waiting) return waiting;
      try {
        let metered;
        try {
          metered = await startModelCall(deps, plan, provider, req, true, true);
        } catch (err) {
          if (!(err instanceof BudgetExceededError) || !plan.virtual_key_id) throw err;
          return await keyShortfall(
            deps,
            row,
            plan.virtual_key_id,
            err.budget,
            await callNeed(deps, provider.id, req),
            row.j_budgets,
          );
        }
        const answer = await streamAnswer(deps, { runId, step, target, req, metered });
        const result = stepResult(plan, runTools, answer.text, answer.toolCalls);
        // The answer is paid for: a database outage now is waited out (heartbeating), not
        // turned into an activity failure whose retry would call the model again.
        const stop = heartbeating();
        try {
          await whileDatabaseUnavailable(
            () => recordStep(deps, { run: row, step, plan, answer, result }),
            RECORD_WAIT_MS,
          );
        } finally {
          stop();
        }
        const key = metered.key;
        if (key?.budget) await alertKeyBudget(deps, row, key.id, key.budget);
        return result;
      } finally {
        // The step's cost is on its run now (or it had none): what it held is let go.
        await budgets.release(runId, step);
      }
    },
  };
}
