/**
 * Why metering refuses a call. Each caller maps them to its own shape: the
 * gateway to each surface's error (429 with or without Retry-After, 400),
 * agent sessions to a non-retryable run failure.
 */
import type { Budget } from './types.js';

const formatCount = (n: number) => n.toLocaleString('en-US');

/**
 * Thrown when a key's requests or tokens per minute are used up (429 with
 * Retry-After): the window's requests, or the tokens its calls reserved (in
 * flight) and used (settled), leave no room for this call.
 */
export class RateLimitedError extends Error {
  override name = 'RateLimitedError';
  /** False when waiting cannot help (CallOverRateLimitError): no Retry-After. */
  readonly retryable: boolean = true;
  constructor(
    readonly retryAfterSeconds: number,
    readonly limit: 'requests_per_minute' | 'tokens_per_minute',
    /** The key's limit, named in the message when known. */
    readonly limitValue?: number,
    message?: string,
  ) {
    super(
      message ??
        `rate limit reached: ${limit}${limitValue === undefined ? '' : ` of ${formatCount(limitValue)}`}` +
          (limit === 'tokens_per_minute' ? ' (calls in flight count the tokens they reserved)' : '') +
          `; retry after ${retryAfterSeconds}s`,
    );
  }
}

/**
 * Thrown when one call reserves more tokens than the key's whole
 * tokens_per_minute: it could never be admitted, so it is refused at once
 * (429, without Retry-After).
 */
export class CallOverRateLimitError extends RateLimitedError {
  override name = 'CallOverRateLimitError';
  override readonly retryable: boolean = false;
  constructor(
    readonly reservedTokens: number,
    tokensPerMinute: number,
  ) {
    super(
      60,
      'tokens_per_minute',
      tokensPerMinute,
      `rate limit: this call reserves ${formatCount(reservedTokens)} tokens (input estimate + max_tokens × n), ` +
        `more than the key's tokens_per_minute of ${formatCount(tokensPerMinute)}, so it can never be admitted; ` +
        'lower max_tokens',
    );
  }
}

/** Thrown when the call's maximum possible cost does not fit in what is left of the key's budget (429, insufficient_quota). */
export class BudgetExceededError extends Error {
  override name = 'BudgetExceededError';
  constructor(readonly budget: Budget) {
    super(`budget of ${budget.max_usd} USD per ${budget.period} is exhausted for this key`);
  }
}

/** Thrown when a key has a budget but no price is known for the model, so its cost cannot be bounded (400). */
export class UnpricedModelError extends Error {
  override name = 'UnpricedModelError';
  constructor(readonly model: string) {
    super(
      `no price is known for model "${model}" and this key has a budget: set pricing on a Model resource for it`,
    );
  }
}
