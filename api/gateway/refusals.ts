import { BudgetExceededError, RateLimitedError, UnpricedModelError } from '../../core/metering/errors.js';
import { InputTooDeepError } from '../../core/metering/model-call.js';
import { UnknownOutputCeilingError } from '../../core/metering/reservation.js';
import { GatewayError, invalidRequest } from './errors.js';

/** Metering's refusals as the gateway answers them (in each surface's error shape); anything else as it is. */
export function refusalError(err: unknown): unknown {
  if (err instanceof RateLimitedError) {
    // Retry-After only when waiting can help (not for a call larger than the limit itself).
    const retryAfterMs = err.retryable ? err.retryAfterSeconds * 1000 : undefined;
    return new GatewayError(429, 'rate_limit', err.message, retryAfterMs);
  }
  if (err instanceof BudgetExceededError) return new GatewayError(429, 'insufficient_quota', err.message);
  if (err instanceof UnpricedModelError) return new GatewayError(400, 'invalid_request', err.message);
  if (err instanceof UnknownOutputCeilingError)
    return new GatewayError(400, 'invalid_request', err.message, undefined, 'max_tokens');
  // The first walk over the caller's body meets a body nested thousands deep: the caller's fault.
  if (err instanceof InputTooDeepError) return invalidRequest(err.message);
  return err;
}
