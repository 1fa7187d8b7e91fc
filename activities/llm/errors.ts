/** Errors of the LLM adapter library. Each says when it is thrown. */

/** Thrown when a request uses a feature the target format has no equivalent for (400, names the feature). */
export class UnsupportedFeatureError extends Error {
  constructor(
    readonly feature: string,
    readonly target: string,
  ) {
    super(`${feature} has no equivalent on ${target} providers`);
    this.name = 'UnsupportedFeatureError';
  }
}

/** Thrown when a request in some vendor format is malformed before anything is sent (400). */
export class InvalidLlmRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidLlmRequestError';
  }
}

/**
 * Thrown when the provider answered with an error status, could not be
 * reached, timed out, or broke a stream. `message` is the upstream's own,
 * prefixed with the provider name; `retryable` covers 429, 5xx and
 * connection failures.
 */
export class UpstreamError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}
