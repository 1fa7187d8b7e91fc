import { context, trace, type Context } from '@opentelemetry/api';
import {
  BudgetExceededError,
  type GatewayPolicyService,
  RateLimitedError,
  UnpricedModelError,
  type Admission as PolicyAdmission,
} from '../../core/metering/gateway-policy.js';
import { costUsd } from '../../core/metering/pricing.js';
import { UnknownOutputCeilingError } from '../../core/metering/reservation.js';
import { startModelCallSpan, type ModelCallSpan } from '../../core/telemetry/genai.js';
import { metrics } from '../../core/telemetry/metrics.js';
import { GatewayError, invalidRequest } from './errors.js';
import type { Admission, AdmissionRequest, GatewayPolicy, GatewaySettlement, Outcome } from './policy.js';
import type { Usage } from '../../core/llm/types.js';
import type { GatewayKey } from './keys.js';

export { DEFAULT_MAX_OUTPUT_TOKENS } from '../../core/metering/reservation.js';

/**
 * Prompt tokens before the call, without a tokenizer: about four characters
 * per token of the request body. Only the reservation uses it; what is
 * charged is what the provider reports.
 */
export function estimateInputTokens(body: Record<string, unknown>): number {
  let json: string;
  try {
    json = JSON.stringify(body);
  } catch (err) {
    // The first walk over the caller's body, so the one that meets a body nested thousands
    // deep (JSON.parse took it; recursion overflows the stack): the caller's fault, a 400.
    if (err instanceof RangeError) throw invalidRequest('request body is nested too deeply');
    throw err;
  }
  return Math.ceil(json.length / 4);
}

/**
 * Rate limits, budgets and the usage log (GatewayPolicyService, all in
 * Postgres) behind the gateway's policy hook, with refusals in the surfaces'
 * own error shapes.
 */
interface Metered {
  admission: PolicyAdmission;
  /** One GenAI CLIENT span per admitted call (refusals are not model calls). */
  span: ModelCallSpan;
}

export function meteredPolicy(service: GatewayPolicyService): GatewayPolicy {
  return {
    async admit(key: GatewayKey, request: AdmissionRequest): Promise<Admission> {
      const admission = await admitOrRefuse(key, request);
      const body = request.body;
      const span = startModelCallSpan({
        system: request.provider.type,
        model: request.model,
        operation: request.operation === 'embed' ? 'embeddings' : 'chat',
        virtualKeyId: key.id,
        stream: request.stream,
        ...(request.max_output_tokens !== undefined ? { maxTokens: request.max_output_tokens } : {}),
        input: body.messages ?? body.contents ?? body.input,
      });
      service.startUsage(admission, span.span.spanContext().traceId);
      return { admission, span } satisfies Metered;
    },

    callContext(admission: Admission): Context {
      return trace.setSpan(context.active(), (admission as Metered).span.span);
    },

    settle(admission: Admission, usage: Usage | undefined, outcome: Outcome): GatewaySettlement {
      const { admission: adm, span } = admission as Metered;
      // The span ends with the call, not with the bookkeeping that follows it.
      const cost = usage && adm.price ? costUsd(adm.price, usage) : undefined;
      if (usage) recordCacheTokens(span, usage);
      const result = {
        ...(outcome.model ? { responseModel: outcome.model } : {}),
        ...(usage ? { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens } : {}),
        ...(cost !== undefined ? { costUsd: cost } : {}),
      };
      if (cost !== undefined && outcome.labels) metrics().gateway.cost(outcome.labels, cost);
      if (outcome.status >= 400)
        span.fail(new Error(outcome.error ?? `HTTP ${outcome.status}`), String(outcome.status), result);
      else span.end(result);
      return settleUsage(adm, usage, outcome, span.span.spanContext().traceId);
    },
  };

  async function admitOrRefuse(key: GatewayKey, request: AdmissionRequest): Promise<PolicyAdmission> {
    try {
      return await service.admit(
        { id: key.id, rate_limit: key.rate_limit, budget: key.budget as PolicyAdmission['key']['budget'] },
        {
          providerId: request.provider.id,
          providerName: request.provider.name,
          model: request.model,
          inputTokens: estimateInputTokens(request.body),
          // An embedding writes no output tokens.
          maxOutputTokens: request.operation === 'embed' ? 0 : request.max_output_tokens,
          choices: request.choices,
        },
      );
    } catch (err) {
      if (err instanceof RateLimitedError) {
        // Retry-After only when waiting can help (not for a call larger than the limit itself).
        const retryAfterMs = err.retryable ? err.retryAfterSeconds * 1000 : undefined;
        throw new GatewayError(429, 'rate_limit', err.message, retryAfterMs);
      }
      if (err instanceof BudgetExceededError) throw new GatewayError(429, 'insufficient_quota', err.message);
      if (err instanceof UnpricedModelError) throw new GatewayError(400, 'invalid_request', err.message);
      if (err instanceof UnknownOutputCeilingError)
        throw new GatewayError(400, 'invalid_request', err.message, undefined, 'max_tokens');
      throw err;
    }
  }

  function settleUsage(
    adm: PolicyAdmission,
    usage: Usage | undefined,
    outcome: Outcome,
    traceId: string,
  ): GatewaySettlement {
    // A success without reported usage is charged its whole reservation:
    // the budget must never be under-counted.
    const charged =
      usage ??
      (outcome.status < 400
        ? { input_tokens: adm.request.inputTokens, output_tokens: adm.reservedOutputTokens }
        : { input_tokens: 0, output_tokens: 0 });
    const { logged, settled } = service.settle(adm, {
      inputTokens: charged.input_tokens,
      outputTokens: charged.output_tokens,
      cacheReadTokens: usage?.cache_read_tokens,
      cacheWriteTokens: usage?.cache_write_tokens,
      status: outcome.status,
      traceId,
    });
    return { logged, settled: settled.then(() => undefined) };
  }
}

/** The GenAI conventions' cache counts on the model-call span (subsets of gen_ai.usage.input_tokens). */
function recordCacheTokens(span: ModelCallSpan, usage: Usage): void {
  if (usage.cache_read_tokens)
    span.span.setAttribute('gen_ai.usage.cache_read.input_tokens', usage.cache_read_tokens);
  if (usage.cache_write_tokens)
    span.span.setAttribute('gen_ai.usage.cache_creation.input_tokens', usage.cache_write_tokens);
}
