/**
 * What surrounds each of the session's model calls: the project's virtual
 * key admits it (liveness, grants, limits, budget), a GenAI span and the
 * GenAI client metrics record it, and the call is priced and charged what it
 * used (to the key, when the project has one; in the usage log either way).
 * The sequence is metering's one model call (core/metering/model-call.ts),
 * as the gateway's is.
 */
import type { Context } from '@opentelemetry/api';
import type { DbProvider } from '../../core/db/tables/index.js';
import { UpstreamError } from '../../core/llm/errors.js';
import type { LlmRequest } from '../../core/llm/types.js';
import { BudgetExceededError } from '../../core/metering/errors.js';
import { ModelCallMeter, type CallOutcome, type MeteredCall } from '../../core/metering/model-call.js';
import type { MeteredKey } from '../../core/metering/types.js';
import { VirtualKeysRepository } from '../../core/repositories/virtual-keys.repository.js';
import { grantsModel, keyExpired } from '../../core/security/virtual-keys.js';
import { metrics } from '../../core/telemetry/metrics.js';
import { errorName, errorTypeLabel, type ModelCallAttributes } from '../../core/telemetry/metrics/genai.js';
import { modelFailure, nonRetryable } from './failures.js';
import type { SessionDeps, TurnPlan } from './types.js';

/** The project's virtual key, when it names one: live, unexpired and granting the model, or the turn fails. */
async function projectKey(
  deps: SessionDeps,
  plan: TurnPlan,
  provider: DbProvider,
  model: string,
): Promise<MeteredKey | undefined> {
  if (!plan.virtual_key_id) return undefined;
  const keys = new VirtualKeysRepository(deps.db);
  const key = await keys.findLive(plan.virtual_key_id); // a deleted key is revoked
  if (!key) throw nonRetryable('virtual_key_not_found', "the project's virtual key no longer exists");
  if (keyExpired(key)) throw nonRetryable('virtual_key_expired', "the project's virtual key has expired");
  const granted = await keys.grantedModels(key.id, provider.id);
  if (!granted || !grantsModel(granted, model))
    throw nonRetryable(
      'model_not_granted',
      `model "${provider.name}/${model}" is not granted to the project's virtual key`,
    );
  return { id: key.id, rate_limit: key.rate_limit, budget: key.budget };
}

/** One of the session's model calls, admitted and spanned: run it in `context()`, then `end` or `fail` it once. */
export class SessionModelCall {
  private readonly started = performance.now();
  private recorded = false;

  constructor(
    private readonly deps: SessionDeps,
    private readonly call: MeteredCall,
    /** The model is the agent's configured one: a bounded label. */
    private readonly labels: ModelCallAttributes,
    /** The project's key that admitted the call, when it has one. */
    readonly key?: MeteredKey,
  ) {}

  context(): Context {
    return this.call.context();
  }

  /**
   * Settles an answered call: span, metrics, usage row and key charged; a
   * failure to charge is logged, never the call's. Returns what the call
   * cost, for its run (undefined when no price or no usage is known).
   */
  async end(outcome: Omit<CallOutcome, 'status'>, what: string): Promise<number | undefined> {
    const settled = this.call.settle({ ...outcome, status: 200 });
    if (this.record() && outcome.usage)
      metrics().genai.usage(this.labels, outcome.usage.input_tokens, outcome.usage.output_tokens);
    await settled.settled.catch((err: unknown) => this.deps.logger.warn({ err }, what));
    return settled.costUsd;
  }

  /** Settles a failed call (the vendor's HTTP status as its error type, when it answered with one). */
  async fail(err: unknown, what: string): Promise<void> {
    const errorType = err instanceof UpstreamError ? String(err.status) : undefined;
    const status = err instanceof UpstreamError ? err.status || 502 : 500;
    const settled = this.call.settle({ status, error: err, errorType });
    this.record(errorTypeLabel(errorType ?? errorName(err)));
    await settled.settled.catch((e: unknown) => this.deps.logger.warn({ err: e }, what));
  }

  private record(errorType?: string): boolean {
    if (this.recorded) return false;
    this.recorded = true;
    metrics().genai.call(this.labels, (performance.now() - this.started) / 1000, errorType);
    return true;
  }
}

/**
 * Starts one of the session's model calls: the project's key checked and
 * its limits and budget applied (a refusal fails the turn, except the
 * key's budget with `pauseOnBudget`: its BudgetExceededError is thrown as
 * it is, and the caller makes the run wait), the span opened.
 */
export async function startModelCall(
  deps: SessionDeps,
  plan: TurnPlan,
  provider: DbProvider,
  req: LlmRequest,
  stream: boolean,
  pauseOnBudget = false,
): Promise<SessionModelCall> {
  const key = await projectKey(deps, plan, provider, req.model);
  let call: MeteredCall;
  try {
    call = await new ModelCallMeter(deps.policy).start(key, {
      provider: { id: provider.id, name: provider.name, type: provider.provider_type },
      model: req.model,
      operation: 'chat',
      stream,
      // None set: the model's output ceiling is reserved (the vendor may write that much).
      maxOutputTokens: req.max_tokens,
      sent: req,
      input: req.messages,
      session: { projectId: plan.project_id, agentId: plan.agent_id, conversationId: plan.conversation_id },
    });
  } catch (err) {
    if (pauseOnBudget && err instanceof BudgetExceededError) throw err;
    throw modelFailure(err);
  }
  const labels = metrics().genai.attributes({
    operation: 'chat',
    providerType: provider.provider_type,
    providerName: provider.name,
    model: req.model,
  });
  return new SessionModelCall(deps, call, labels, key);
}
