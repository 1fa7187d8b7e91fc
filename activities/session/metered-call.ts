/**
 * What surrounds each of the session's model calls: the project's virtual
 * key admits it (grants, limits, budget), a GenAI span and the GenAI client
 * metrics record it, and the key is charged what it used.
 */
import type { DbProvider } from '../../core/db/llm-config.tables.js';
import type { LlmRequest } from '../../core/llm/types.js';
import type { Admission, Outcome } from '../../core/metering/gateway-policy.js';
import { VirtualKeysRepository } from '../../core/repositories/virtual-keys.repository.js';
import type { Span } from '@opentelemetry/api';
import { startModelCallSpan, type ModelCallEnd } from '../../core/telemetry/genai.js';
import { metrics } from '../../core/telemetry/metrics.js';
import { errorName, errorTypeLabel } from '../../core/telemetry/metrics/genai.js';
import { estimateTokens } from './context.js';
import { modelFailure, nonRetryable } from './failures.js';
import type { SessionDeps, TurnPlan } from './types.js';

/** The project's virtual key, when it names one: its grants, limits and budget apply to the agent's calls. */
export async function admit(
  deps: SessionDeps,
  plan: TurnPlan,
  provider: DbProvider,
  req: LlmRequest,
): Promise<Admission | undefined> {
  if (!plan.virtual_key_id) return undefined;
  const keys = new VirtualKeysRepository(deps.db);
  const key = await keys.findLive(plan.virtual_key_id); // a deleted key is revoked
  if (!key) throw nonRetryable('virtual_key_not_found', "the project's virtual key no longer exists");
  if (key.expires_at && key.expires_at.getTime() <= Date.now())
    throw nonRetryable('virtual_key_expired', "the project's virtual key has expired");
  const granted = await keys.grantedModels(key.id, provider.id);
  const model = req.model;
  if (!granted || !(granted.includes(model) || granted.includes('*')))
    throw nonRetryable(
      'model_not_granted',
      `model "${provider.name}/${model}" is not granted to the project's virtual key`,
    );
  try {
    return await deps.policy.admit(
      { id: key.id, rate_limit: key.rate_limit, budget: key.budget },
      {
        providerId: provider.id,
        providerName: provider.name,
        model,
        inputTokens: Math.ceil(JSON.stringify(req.messages).length / 4) + estimateTokens([req.system]),
        // None set: the model's output ceiling is reserved (the vendor may write that much).
        maxOutputTokens: req.max_tokens,
      },
    );
  } catch (err) {
    throw modelFailure(err);
  }
}

/** Charges the key for the call; a failure to do so is logged (as `what`), never the call's failure. */
export async function settle(
  deps: SessionDeps,
  admission: Admission | undefined,
  outcome: Outcome,
  what: string,
): Promise<void> {
  if (!admission) return;
  await deps.policy
    .settle(admission, outcome)
    .settled.catch((err: unknown) => deps.logger.warn({ err }, what));
}

/** One of the session's model calls as recorded: its span, and its duration and tokens, ended together. */
export interface SessionModelCall {
  span: Span;
  end(result?: ModelCallEnd): void;
  /** `errorType`: the vendor's HTTP status, when it answered with one. */
  fail(err: unknown, errorType?: string): void;
}

/** The GenAI span of one of the session's model calls, carrying the session's ids, and its metrics. */
export function modelCallSpan(
  plan: TurnPlan,
  provider: DbProvider,
  req: LlmRequest,
  stream: boolean,
): SessionModelCall {
  const call = startModelCallSpan({
    system: provider.provider_type,
    model: req.model,
    projectId: plan.project_id,
    agentId: plan.agent_id,
    conversationId: plan.conversation_id,
    ...(plan.virtual_key_id ? { virtualKeyId: plan.virtual_key_id } : {}),
    stream,
    ...(req.max_tokens !== undefined ? { maxTokens: req.max_tokens } : {}),
    input: req.messages,
  });
  // The model is the agent's configured one: a bounded label.
  const labels = metrics().genai.attributes({
    operation: 'chat',
    providerType: provider.provider_type,
    providerName: provider.name,
    model: req.model,
  });
  const started = performance.now();
  let recorded = false;
  const record = (errorType?: string) => {
    if (recorded) return false;
    recorded = true;
    metrics().genai.call(labels, (performance.now() - started) / 1000, errorType);
    return true;
  };
  return {
    span: call.span,
    end(result = {}) {
      call.end(result);
      if (record() && result.inputTokens !== undefined)
        metrics().genai.usage(labels, result.inputTokens, result.outputTokens ?? 0);
    },
    fail(err, errorType) {
      call.fail(err, errorType);
      record(errorTypeLabel(errorType ?? errorName(err)));
    },
  };
}
