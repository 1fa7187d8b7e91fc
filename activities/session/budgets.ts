/**
 * A turn's model call against the budgets beside the project's key: the
 * agent's and the conversation's (read live, so a raise applies to the next
 * call). The call's worst case is held against each before it is sent; one
 * that does not fit makes the run wait instead of failing (the workflow's
 * BudgetWait). A budget crossing its alert share fires `budget.threshold`,
 * once per period, before anything pauses.
 */
import type { DbRun } from '../../core/db/tables/index.js';
import {
  crossesAlert,
  DEFAULT_ALERT_AT,
  type BudgetInEffect,
  type BudgetNeed,
  type BudgetPeriodUse,
  type BudgetShortfall,
} from '../../core/budgets/types.js';
import type { LlmRequest } from '../../core/llm/types.js';
import { estimateInputTokens } from '../../core/metering/model-call.js';
import {
  reservedOutputTokens,
  reservedUsd,
  UnknownOutputCeilingError,
} from '../../core/metering/reservation.js';
import type { Budget } from '../../core/metering/types.js';
import { BudgetsRepository, type RunBudgets } from '../../core/repositories/budgets.repository.js';
import { MeteringRepository } from '../../core/repositories/metering.repository.js';
import { SubAgentsRepository } from '../../core/repositories/sub-agents.repository.js';
import type { ModelStepResult } from '../../workflows/session.definitions.js';
import { emitProjectWebhooks } from '../webhooks/run-webhooks.js';
import { nonRetryable } from './failures.js';
import type { SessionDeps } from './types.js';

/** A reservation outlives its call only when the worker died; the run's end removes it sooner. */
const RESERVATION_TTL_MS = 60 * 60_000;

type AwaitingBudget = Extract<ModelStepResult, { kind: 'awaiting_budget' }>;
type ScopedBudget = BudgetInEffect & { scope: 'agent' | 'conversation' };

/**
 * The run's agent and conversation budgets in effect, and the agent's wait
 * timeout: from `known` (read with the step's start), else read now.
 */
async function scopeBudgets(deps: SessionDeps, run: DbRun, known?: RunBudgets | null) {
  const row = known ?? (await new BudgetsRepository(deps.db).runBudgets(run.id));
  const budgets: ScopedBudget[] = [];
  if (row?.agent_budget && run.agent_id)
    budgets.push({ scope: 'agent', scope_id: run.agent_id, budget: row.agent_budget });
  if (row?.conversation_budget)
    budgets.push({ scope: 'conversation', scope_id: run.conversation_pk, budget: row.conversation_budget });
  // A sub-agent's run spends its callers' budgets too (runs.budget_scopes).
  if (run.budget_scopes?.length)
    budgets.push(...(await new SubAgentsRepository(deps.db).budgets(run.budget_scopes)));
  return {
    budgets,
    conversationId: row?.conversation_id ?? '',
    waitTimeoutMs: row?.budget_wait_timeout_ms ?? null,
  };
}

/** The call's worst case, as the key's admission reserves it: a budget cannot hold a call whose cost is unbounded. */
export async function callNeed(deps: SessionDeps, providerId: string, req: LlmRequest): Promise<BudgetNeed> {
  const { price, maxOutputTokens } = await deps.policy.limits(providerId, req.model);
  if (!price)
    throw nonRetryable(
      'unpriced_model',
      `no price is known for model "${req.model}" and a budget applies: set pricing on a Model resource for it`,
    );
  let output: number;
  try {
    output = reservedOutputTokens(
      { model: req.model, maxOutputTokens: req.max_tokens },
      maxOutputTokens,
      true,
    );
  } catch (err) {
    if (err instanceof UnknownOutputCeilingError) throw nonRetryable('unknown_output_limit', err.message);
    throw err;
  }
  const input = estimateInputTokens(req);
  return { usd: reservedUsd(price, input, output), tokens: input + output };
}

function shortfall(b: BudgetInEffect, id: string, use: BudgetPeriodUse, need: BudgetNeed): BudgetShortfall {
  return {
    scope: b.scope,
    id,
    period: b.budget.period,
    max_usd: b.budget.max_usd,
    max_tokens: b.budget.max_tokens ?? null,
    spent_usd: round(use.spent_usd),
    spent_tokens: use.spent_tokens,
    reserved_usd: round(use.reserved_usd),
    needed_usd: round(need.usd),
    needed_tokens: need.tokens,
    resets_at: use.resets_at ? use.resets_at.toISOString() : null,
  };
}

const round = (usd: number) => Math.round(usd * 1e8) / 1e8;

/** What a waiting run's step returns: the pause's details name the budget (with `scope_id` for the API's wake-up). */
function awaiting(s: BudgetShortfall, scopeId: string, waitTimeoutMs: number | null): AwaitingBudget {
  return {
    kind: 'awaiting_budget',
    shortfall: { ...s, scope_id: scopeId },
    resetsAt: s.resets_at ? Date.parse(s.resets_at) : null,
    waitTimeoutMs,
  };
}

/** `budget.threshold` once per budget and period, when the call takes the budget to its alert share. */
async function alertIfCrossing(
  deps: SessionDeps,
  run: DbRun,
  b: BudgetInEffect,
  id: string,
  use: BudgetPeriodUse,
  need: BudgetNeed,
): Promise<void> {
  if (!crossesAlert(b.budget, use, need)) return;
  const repo = new BudgetsRepository(deps.db);
  if (!(await repo.claimAlert(b.scope, b.scope_id, use.period_start))) return;
  const data = {
    ...shortfall(b, id, use, need),
    alert_at: b.budget.alert_at ?? DEFAULT_ALERT_AT,
    period_start: use.period_start.toISOString(),
    project_id: run.project_id,
    agent_id: run.agent_id,
    run_id: run.id,
  };
  const key = `${b.scope}/${b.scope_id}/${use.period_start.toISOString()}`;
  try {
    await emitProjectWebhooks(deps.db, run.project_id, 'budget.threshold', key, data);
  } catch (err) {
    deps.logger.warn({ err, runId: run.id }, 'could not record a budget.threshold delivery');
  }
}

/**
 * Holds the call's worst case against the agent's and the conversation's
 * budgets for this step. Undefined when it fits (or none applies); else the
 * step's `awaiting_budget` result. `release` after the call lets go of it.
 */
export async function holdScopeBudgets(
  deps: SessionDeps,
  run: DbRun,
  step: number,
  providerId: string,
  req: LlmRequest,
  known?: RunBudgets | null,
): Promise<AwaitingBudget | undefined> {
  const { budgets, conversationId, waitTimeoutMs } = await scopeBudgets(deps, run, known);
  if (budgets.length === 0) return undefined;
  const need = await callNeed(deps, providerId, req);
  // A conversation's budget is named by its client id (a caller's conversation, inherited, by its pk).
  const idOf = (b: ScopedBudget) =>
    b.scope === 'conversation' && b.scope_id === run.conversation_pk ? conversationId : b.scope_id;
  const outcome = await new BudgetsRepository(deps.db).reserve(
    run.id,
    step,
    budgets,
    need,
    RESERVATION_TTL_MS,
  );
  if (outcome.ok) {
    for (const { budget, use } of outcome.uses)
      await alertIfCrossing(deps, run, budget, idOf(budget), use, need);
    return undefined;
  }
  await alertIfCrossing(deps, run, outcome.budget, idOf(outcome.budget), outcome.use, need);
  return awaiting(
    shortfall(outcome.budget, idOf(outcome.budget), outcome.use, need),
    outcome.budget.scope_id,
    waitTimeoutMs,
  );
}

/** The key's budget period as its ledger counts it (a key's budget counts no tokens). */
async function keyPeriodUse(deps: SessionDeps, keyId: string, budget: Budget): Promise<BudgetPeriodUse> {
  const figures = await new MeteringRepository(deps.db).budgetPeriod(keyId, budget.period);
  return {
    period_start: figures.period_start,
    resets_at: figures.period_end,
    spent_usd: figures.spent_usd,
    spent_tokens: 0,
    reserved_usd: figures.reserved_usd,
    reserved_tokens: 0,
  };
}

/** The key's budget figures for a call it refused: the run waits for the key (its raise, its period, a person). */
export async function keyShortfall(
  deps: SessionDeps,
  run: DbRun,
  keyId: string,
  budget: Budget,
  need: BudgetNeed,
  known?: RunBudgets | null,
): Promise<AwaitingBudget> {
  const use = await keyPeriodUse(deps, keyId, budget);
  const b: BudgetInEffect = { scope: 'key', scope_id: keyId, budget };
  await alertIfCrossing(deps, run, b, keyId, use, need);
  const { waitTimeoutMs } = await scopeBudgets(deps, run, known);
  return awaiting(shortfall(b, keyId, use, need), keyId, waitTimeoutMs);
}

/** After an admitted call on a budgeted key: `budget.threshold` when it takes the key to its alert share. */
export async function alertKeyBudget(
  deps: SessionDeps,
  run: DbRun,
  keyId: string,
  budget: Budget,
): Promise<void> {
  // The call's own reservation is in the figures already.
  const use = await keyPeriodUse(deps, keyId, budget);
  await alertIfCrossing(deps, run, { scope: 'key', scope_id: keyId, budget }, keyId, use, {
    usd: 0,
    tokens: 0,
  });
}
