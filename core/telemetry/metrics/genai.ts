import type { Attributes, Histogram, Meter } from '@opentelemetry/api';

/** The GenAI semantic conventions' advised buckets (seconds; tokens). */
const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];

/**
 * Where a model call is counted: operation, provider (its type as
 * `gen_ai.provider.name`, its configured name as `agent_server.provider.name`),
 * model, and for the gateway the surface and, behind METRICS_PER_KEY, the
 * virtual key. Made once per combination with its variants (token type,
 * error type), so recording a call allocates nothing.
 */
export class ModelCallAttributes {
  readonly base: Attributes;
  readonly input: Attributes;
  readonly output: Attributes;
  private readonly errors = new Map<string, Attributes>();

  constructor(base: Attributes) {
    this.base = base;
    this.input = { ...base, 'gen_ai.token.type': 'input' };
    this.output = { ...base, 'gen_ai.token.type': 'output' };
  }

  /** `errorType`: an HTTP status or an error class name, never free text. */
  withError(errorType: string): Attributes {
    let a = this.errors.get(errorType);
    if (!a) {
      a = { ...this.base, 'error.type': errorType };
      if (this.errors.size < 100) this.errors.set(errorType, a);
    }
    return a;
  }
}

/** The label values of one call; undefined fields are left out (a request refused before its model was known). */
export interface ModelCallLabels {
  operation: string;
  providerType?: string | undefined;
  providerName?: string | undefined;
  model?: string | undefined;
  surface?: string | undefined;
  keyId?: string | undefined;
}

/** An error type as a label value: an HTTP status, or a class or code name; anything else is `_OTHER`. */
export function errorTypeLabel(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(value)) return value;
  return '_OTHER';
}

/** What failed, for `error.type`: an error's class name (`error` for a thrown non-Error). */
export function errorName(err: unknown): string {
  return err instanceof Error ? err.name : 'error';
}

/**
 * `gen_ai.client.operation.duration` and `gen_ai.client.token.usage`, for
 * every call to a model vendor: the gateway's upstream calls (with their
 * surface) and the agent sessions' calls.
 */
export class GenAiMetrics {
  private readonly duration: Histogram;
  private readonly tokens: Histogram;
  private readonly cache = new Map<string, ModelCallAttributes>();

  constructor(meter: Meter) {
    this.duration = meter.createHistogram('gen_ai.client.operation.duration', {
      description:
        'Duration of calls to model vendors (gateway: upstream time, retries and fallbacks included).',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    this.tokens = meter.createHistogram('gen_ai.client.token.usage', {
      description: 'Tokens a model call used, as the vendor reported them, by gen_ai.token.type.',
      unit: '{token}',
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    });
  }

  attributes(l: ModelCallLabels): ModelCallAttributes {
    const key = `${l.operation}\0${l.providerType ?? ''}\0${l.providerName ?? ''}\0${l.model ?? ''}\0${l.surface ?? ''}\0${l.keyId ?? ''}`;
    let a = this.cache.get(key);
    if (a) return a;
    const base: Attributes = { 'gen_ai.operation.name': l.operation };
    if (l.surface !== undefined) base['agent_server.gateway.surface'] = l.surface;
    if (l.providerType !== undefined) base['gen_ai.provider.name'] = l.providerType;
    if (l.providerName !== undefined) base['agent_server.provider.name'] = l.providerName;
    if (l.model !== undefined) base['gen_ai.request.model'] = l.model;
    if (l.keyId !== undefined) base['agent_server.virtual_key.id'] = l.keyId;
    a = new ModelCallAttributes(base);
    // Label values come from configuration, so combinations are few; per-key ones are not: start over.
    if (this.cache.size >= 5_000) this.cache.clear();
    this.cache.set(key, a);
    return a;
  }

  /** One call's duration; `errorType` when it failed. */
  call(a: ModelCallAttributes, seconds: number, errorType?: string): void {
    this.duration.record(seconds, errorType === undefined ? a.base : a.withError(errorType));
  }

  usage(a: ModelCallAttributes, inputTokens: number, outputTokens: number): void {
    this.tokens.record(inputTokens, a.input);
    this.tokens.record(outputTokens, a.output);
  }
}
