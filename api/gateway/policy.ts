import type { Context } from '@opentelemetry/api';
import type { ProviderFormat, Usage } from '../../core/llm/types.js';
import type { GatewayKey } from './keys.js';
import type { ModelCallAttributes } from '../../core/telemetry/metrics/genai.js';

/** What is known about a request before the upstream call. */
export interface AdmissionRequest {
  surface: ProviderFormat;
  operation: 'chat' | 'embed';
  stream: boolean;
  provider: { id: string; name: string; type: ProviderFormat };
  model: string;
  /** The caller's max output tokens per choice, when it gave one (the upper bound of a reservation). */
  max_output_tokens?: number;
  /** How many choices the vendor writes and bills (OpenAI's `n`, Gemini's `candidateCount`), when more than one may be. */
  choices?: number;
  /** The request body as received, to estimate input tokens from. */
  body: Record<string, unknown>;
}

export interface Outcome {
  status: number;
  /** Who finally answered (after fallbacks); absent when nothing did. */
  provider?: { id: string; name: string };
  model?: string;
  latency_ms: number;
  error?: string;
  /** The request's metric labels, for what the policy records (cost); absent with metrics off. */
  labels?: ModelCallAttributes | undefined;
}

/** Opaque to the pipeline: whatever admit() reserved, handed back to settle(). */
export type Admission = unknown;

/**
 * The one place where rate limits, budgets and the usage log plug in.
 * `admit` runs after authentication and model resolution, before anything
 * is sent upstream; it throws a GatewayError (429, `rate_limit` or
 * `insufficient_quota`) to refuse. `settle` runs exactly once per admitted
 * request, once the answer is complete (or failed, or the client left),
 * with the usage the provider reported (undefined when it reported none,
 * e.g. a same-format stream whose caller did not ask for usage).
 */
export interface GatewayPolicy {
  admit(key: GatewayKey, request: AdmissionRequest): Promise<Admission>;
  /**
   * The context the upstream call runs in: the policy's model-call span as
   * the active span, so the vendor request propagates it and the HTTP client
   * adds no second CLIENT span (core/telemetry/model-call-context.ts).
   */
  callContext?(admission: Admission): Context;
  settle(admission: Admission, usage: Usage | undefined, outcome: Outcome): GatewaySettlement;
}

/**
 * `logged`: the call's usage row is stored (the pipeline holds the answer's
 * last bytes for it, within a bound); `settled`: everything is, counters
 * included (the pipeline does not wait for it and logs a rejection).
 */
export interface GatewaySettlement {
  logged: Promise<void>;
  settled: Promise<void>;
}

/** Admits everything and records nothing: limits, budgets and the usage log are not built yet. */
export const noopPolicy: GatewayPolicy = {
  admit: () => Promise.resolve(undefined),
  settle: () => ({ logged: Promise.resolve(), settled: Promise.resolve() }),
};
