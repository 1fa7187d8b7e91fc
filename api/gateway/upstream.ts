import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidLlmRequestError, UnsupportedFeatureError, UpstreamError } from '../../core/llm/errors.js';
import { EgressDeniedError, EgressRedirectDeniedError } from '../../core/security/egress-policy.js';
import { egressDenied, GatewayError, invalidRequest } from './errors.js';
import type { Candidate } from './models.js';

export interface RetryOptions {
  /** Retries after the first attempt, per candidate. */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { retries: 2, baseDelayMs: 200, maxDelayMs: 8_000 };

/**
 * Exponential backoff with full jitter, never sooner than the upstream's
 * Retry-After. A Retry-After beyond `maxDelayMs` ends the retries: waiting
 * that long holds the caller, and a fallback may answer now.
 */
function delayBefore(attempt: number, err: UpstreamError, opts: RetryOptions): number | undefined {
  const backoff = Math.random() * Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** attempt);
  if (err.retryAfterMs === undefined) return backoff;
  return err.retryAfterMs > opts.maxDelayMs ? undefined : Math.max(err.retryAfterMs, backoff);
}

/**
 * Tries each candidate in order, each with retries on retryable failures
 * (429, 5xx, connection errors); a 4xx or any other error ends at once.
 */
export async function withRetriesAndFallbacks<T>(
  candidates: Candidate[],
  attempt: (c: Candidate) => Promise<T>,
  opts: RetryOptions,
  signal: AbortSignal,
): Promise<{ value: T; candidate: Candidate }> {
  let last: unknown;
  for (const candidate of candidates) {
    for (let i = 0; ; i++) {
      try {
        return { value: await attempt(candidate), candidate };
      } catch (err) {
        if (!(err instanceof UpstreamError && err.retryable) || signal.aborted) throw err;
        last = err;
        const delay = i < opts.retries ? delayBefore(i, err, opts) : undefined;
        if (delay === undefined) break;
        await sleep(delay, undefined, { signal });
      }
    }
  }
  throw last;
}

const UPSTREAM_KIND: Record<number, GatewayError['kind']> = {
  400: 'invalid_request',
  404: 'not_found',
  413: 'request_too_large',
  422: 'invalid_request',
  429: 'rate_limit',
  504: 'timeout',
};

/**
 * Any error of a gateway request as a GatewayError. An upstream 401/403 is
 * the provider's credential, not the caller's, so the caller sees a 502.
 */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  // The server's own policy refuses the provider: a 4xx, since the SDKs retry every 5xx in vain.
  // A refused redirect is the provider's doing: a 502, still code egress_denied.
  if (err instanceof EgressDeniedError)
    return egressDenied(err instanceof EgressRedirectDeniedError ? 502 : 403, err.message);
  if (err instanceof UnsupportedFeatureError || err instanceof InvalidLlmRequestError)
    return invalidRequest(err.message);
  if (err instanceof UpstreamError) {
    const status = err.status === 401 || err.status === 403 ? 502 : err.status >= 400 ? err.status : 502;
    return new GatewayError(status, UPSTREAM_KIND[status] ?? 'upstream', err.message, err.retryAfterMs);
  }
  return new GatewayError(500, 'internal', 'Internal server error');
}
