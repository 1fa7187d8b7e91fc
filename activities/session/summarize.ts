/**
 * The `summarizeHistory` activity: the llm summarizer folds older turns into
 * a stored summary. Its model call is one of the run's: metered and priced
 * as the others are, its tokens and cost added to the run's.
 */
import { context as otelContext } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import { complete } from '../../core/llm/client.js';
import { targetOf } from '../../core/llm/provider-target.js';
import type { LlmRequest, LlmResponse } from '../../core/llm/types.js';
import { ProvidersRepository } from '../../core/repositories/providers.repository.js';
import { RunEventsRepository } from '../../core/repositories/run-events.repository.js';
import { ThreadHistoryRepository } from '../../core/repositories/thread-history.repository.js';
import type { DbRun } from '../../core/db/tables/index.js';
import { BudgetExceededError } from '../../core/metering/errors.js';
import { BudgetsRepository } from '../../core/repositories/budgets.repository.js';
import type { ModelStepResult } from '../../workflows/session.definitions.js';
import { callNeed, holdScopeBudgets, keyShortfall } from './budgets.js';
import { summarizationSlice, transcriptForSummary, type StoredMessage } from './context.js';
import { modelFailure, nonRetryable } from './failures.js';
import { threadMessages } from './history.js';
import { startModelCall } from './metered-call.js';
import { requestParameters } from './model-request.js';
import { heartbeating, loadTurnRun } from './turn-run.js';
import type { PlanModel, SessionDeps, TurnPlan } from './types.js';

type Summarizer = NonNullable<TurnPlan['summarizer']>;

/** The summarizer's request: the previous summary and the turns to fold, as one user message. */
function summaryRequest(
  summarizer: Summarizer,
  previous: string | undefined,
  older: StoredMessage[],
): LlmRequest {
  return {
    model: summarizer.model.model_id,
    ...requestParameters(summarizer.model.parameters),
    system: summarizer.system,
    messages: [{ role: 'user', content: [{ type: 'text', text: transcriptForSummary(previous, older) }] }],
  };
}

/** The model's provider and how to reach it (its key decrypted just for the call). */
async function providerOf(deps: SessionDeps, model: PlanModel) {
  const provider = await new ProvidersRepository(deps.db).findById(model.provider_id);
  if (!provider) throw nonRetryable('provider_not_found', `the model's provider no longer exists`);
  return { target: targetOf(provider, deps.secrets), provider };
}

/** What the summarizer would fold now: the turns after the last summary but the most recent ones. */
async function foldable(history: ThreadHistoryRepository, plan: TurnPlan, runId: string) {
  const rows = await threadMessages(history, plan.thread_id, runId);
  const previous = await history.latestSummary(plan.thread_id);
  const keep = plan.llm_summarizer_keep_recent_count ?? 1;
  return { previous, slice: summarizationSlice(rows, runId, keep, previous?.through_seq) };
}

/** A summary's reservation against budgets is its run's step 0 (model calls count from 1). */
const SUMMARY_STEP = 0;

type AwaitingBudget = Extract<ModelStepResult, { kind: 'awaiting_budget' }>;

export function createSummarizeActivities(deps: SessionDeps) {
  const history = new ThreadHistoryRepository(deps.db);
  const runs = new RunEventsRepository(deps.db);
  const budgets = new BudgetsRepository(deps.db);

  return {
    /** Folds the older turns into a stored summary with the summarizer prompt and model. */
    async summarizeHistory(runId: string): Promise<{ summarized: number } | AwaitingBudget> {
      const { run, plan } = await loadTurnRun(deps.db, runId);
      if (!plan.summarizer) return { summarized: 0 };
      if (await history.hasRunSummary(runId)) return { summarized: 0 };
      const { previous, slice } = await foldable(history, plan, runId);
      if (!slice) return { summarized: 0 };
      const upstream = await providerOf(deps, plan.summarizer.model);
      const req = summaryRequest(plan.summarizer, previous?.content, slice.older);
      const waiting = await holdScopeBudgets(deps, run, SUMMARY_STEP, upstream.provider.id, req);
      if (waiting) return waiting;
      try {
        return await summarize(run, plan, upstream, req, slice.throughSeq, slice.older.length);
      } finally {
        await budgets.release(runId, SUMMARY_STEP);
      }
    },
  };

  /** The summarizer's call, metered (the key's budget may make the run wait); its summary stored. */
  async function summarize(
    run: DbRun,
    plan: TurnPlan,
    { target, provider }: Awaited<ReturnType<typeof providerOf>>,
    req: LlmRequest,
    throughSeq: number,
    folded: number,
  ): Promise<{ summarized: number } | AwaitingBudget> {
    const runId = run.id;
    let metered;
    try {
      metered = await startModelCall(deps, plan, provider, req, false, true);
    } catch (err) {
      if (!(err instanceof BudgetExceededError) || !plan.virtual_key_id) throw err;
      return keyShortfall(deps, run, plan.virtual_key_id, err.budget, await callNeed(deps, provider.id, req));
    }
    const stop = heartbeating();
    let res: LlmResponse;
    try {
      res = await otelContext.with(metered.context(), () =>
        complete(target, req, Context.current().cancellationSignal),
      );
    } catch (err) {
      stop();
      await metered.fail(err, 'settling a summarizer call failed');
      throw modelFailure(err);
    }
    stop();
    const costUsd = await metered.end(
      { responseModel: res.model, usage: res.usage, finishReasons: [res.finish_reason] },
      'settling a summarizer call failed',
    );
    await runs.storeSummary({
      threadId: plan.thread_id,
      runId,
      throughSeq,
      content: res.text,
      usage: res.usage,
      costUsd,
    });
    return { summarized: folded };
  }
}
