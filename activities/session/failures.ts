/**
 * How the session's failures cross into Temporal. The failure `type` is what
 * the workflow reads and what retry policies match: these strings are part of
 * the contract with running workflows and must not change.
 */
import { ApplicationFailure, asyncLocalStorage } from '@temporalio/activity';
import { InvalidLlmRequestError, UnsupportedFeatureError, UpstreamError } from '../../core/llm/errors.js';
import {
  BudgetExceededError,
  CallOverRateLimitError,
  RateLimitedError,
  UnpricedModelError,
} from '../../core/metering/errors.js';
import { UnknownOutputCeilingError } from '../../core/metering/reservation.js';
import { EgressDeniedError } from '../../core/security/egress-policy.js';

export function nonRetryable(code: string, message: string, details?: unknown): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, code, ...(details !== undefined ? [details] : []));
}

/** An upstream error's failure: transient trouble is retried (after Retry-After), the caller's mistakes are not. */
function upstreamFailure(err: UpstreamError): ApplicationFailure {
  const transient = err.retryable || err.status === 429 || err.status >= 500 || err.status === 0;
  if (transient)
    return ApplicationFailure.create({
      message: err.message,
      type: 'model_unavailable',
      details: [{ status: err.status }],
      ...(err.retryAfterMs !== undefined ? { nextRetryDelay: err.retryAfterMs } : {}),
    });
  const code =
    err.status === 401 || err.status === 403
      ? 'model_auth_failed'
      : err.status === 404
        ? 'model_not_found'
        : 'model_bad_request';
  return nonRetryable(code, err.message, { status: err.status });
}

/**
 * The activity's cancellation (a CancelledFailure) once the workflow has
 * cancelled it: whatever the aborted call threw, Temporal must see the
 * activity as cancelled, not failed. Undefined outside a cancelled activity.
 */
export function cancellation(): unknown {
  const signal = asyncLocalStorage.getStore()?.cancellationSignal;
  return signal?.aborted ? signal.reason : undefined;
}

/** A failed model call as Temporal should treat it: retry transient trouble, stop on the caller's mistakes. */
export function modelFailure(err: unknown): unknown {
  const cancelled = cancellation();
  if (cancelled !== undefined) return cancelled;
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof UnsupportedFeatureError || err instanceof InvalidLlmRequestError)
    return nonRetryable('invalid_model_request', err.message);
  if (err instanceof EgressDeniedError) return nonRetryable('egress_denied', err.message);
  if (err instanceof UpstreamError) return upstreamFailure(err);
  if (err instanceof BudgetExceededError) return nonRetryable('budget_exceeded', err.message);
  if (err instanceof UnpricedModelError) return nonRetryable('unpriced_model', err.message);
  if (err instanceof UnknownOutputCeilingError) return nonRetryable('unknown_output_limit', err.message);
  // Retrying cannot help a call that reserves more than the whole limit.
  if (err instanceof CallOverRateLimitError) return nonRetryable('call_over_rate_limit', err.message);
  if (err instanceof RateLimitedError)
    return ApplicationFailure.create({
      message: err.message,
      type: 'rate_limited',
      nextRetryDelay: err.retryAfterSeconds * 1000,
    });
  return err;
}
