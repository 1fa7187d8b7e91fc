/** Errors of the LLM adapter library. Each says when it is thrown. */

import { headerSecrets, redactSecretValues, redactText, urlSecrets } from '../security/redact.js';
import type { ProviderTarget } from './types.js';

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

/** What we send a provider that must never come back out of its answers: its key, credential headers, base_url credentials. */
function targetSecrets(target: ProviderTarget): string[] {
  return [target.api_key ?? '', ...headerSecrets(target.headers), ...urlSecrets(target.base_url)];
}

/**
 * Text from a provider's answer (an error body, a stream's error event) fit
 * to show the gateway's caller, a span or a log: a provider or a proxy in
 * front of it may echo the credential it received. Error paths only.
 */
export function redactUpstreamText(text: string, target: ProviderTarget): string {
  return redactText(redactSecretValues(text, targetSecrets(target)));
}

/** An UpstreamError whose message went through `redactUpstreamText`; anything else unchanged. */
export function redactUpstreamError(err: unknown, target: ProviderTarget): unknown {
  if (!(err instanceof UpstreamError)) return err;
  const message = redactUpstreamText(err.message, target);
  return message === err.message
    ? err
    : new UpstreamError(err.status, message, err.retryable, err.retryAfterMs);
}
