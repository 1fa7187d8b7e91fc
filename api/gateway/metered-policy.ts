import { trace } from '@opentelemetry/api';
import type { Db } from '../db/knex.js';
import type { UsageWriter } from '../services/usage-writer.js';
import {
  BudgetExceededError,
  GatewayPolicyService,
  RateLimitedError,
  UnpricedModelError,
  type Admission as PolicyAdmission,
} from '../services/gateway-policy.service.js';
import { GatewayError } from './errors.js';
import type { Admission, AdmissionRequest, GatewayPolicy, Outcome } from './policy.js';
import type { Usage } from '../../activities/llm/types.js';
import type { GatewayKey } from './keys.js';

/** When the caller sets no output limit, a chat call is reserved as if it could write this many tokens. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4_096;

/**
 * Prompt tokens before the call, without a tokenizer: about four characters
 * per token of the request body. Only the reservation uses it; what is
 * charged is what the provider reports.
 */
export function estimateInputTokens(body: Record<string, unknown>): number {
  return Math.ceil(JSON.stringify(body).length / 4);
}

/**
 * Rate limits, budgets and the usage log (GatewayPolicyService, all in
 * Postgres) behind the gateway's policy hook, with refusals in the surfaces'
 * own error shapes.
 */
export function meteredPolicy(db: Db, usageWriter?: UsageWriter): GatewayPolicy {
  const service = new GatewayPolicyService(db, usageWriter);
  return {
    async admit(key: GatewayKey, request: AdmissionRequest): Promise<Admission> {
      try {
        return await service.admit(
          { id: key.id, rate_limit: key.rate_limit, budget: key.budget as PolicyAdmission['key']['budget'] },
          {
            providerId: request.provider.id,
            providerName: request.provider.name,
            model: request.model,
            inputTokens: estimateInputTokens(request.body),
            maxOutputTokens:
              request.operation === 'embed' ? 0 : (request.max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS),
          },
        );
      } catch (err) {
        if (err instanceof RateLimitedError) {
          throw new GatewayError(429, 'rate_limit', err.message, err.retryAfterSeconds * 1000);
        }
        if (err instanceof BudgetExceededError)
          throw new GatewayError(429, 'insufficient_quota', err.message);
        if (err instanceof UnpricedModelError) throw new GatewayError(400, 'invalid_request', err.message);
        throw err;
      }
    },

    async settle(admission: Admission, usage: Usage | undefined, outcome: Outcome): Promise<void> {
      const adm = admission as PolicyAdmission;
      // A success without reported usage is charged its whole reservation:
      // the budget must never be under-counted.
      const charged =
        usage ??
        (outcome.status < 400
          ? { input_tokens: adm.request.inputTokens, output_tokens: adm.request.maxOutputTokens }
          : { input_tokens: 0, output_tokens: 0 });
      await service.settle(adm, {
        inputTokens: charged.input_tokens,
        outputTokens: charged.output_tokens,
        status: outcome.status,
        // settle runs inside the request, so the active span is this request's.
        traceId: trace.getActiveSpan()?.spanContext().traceId,
      });
    },
  };
}
