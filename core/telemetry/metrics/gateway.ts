import type { Attributes, Counter, Histogram, Meter } from '@opentelemetry/api';
import type { GenAiMetrics, ModelCallAttributes } from './genai.js';

/** What the gateway counts of a call's usage (core/llm/types.ts Usage): the cache counts are part of the input. */
interface CallUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
}

/**
 * Labels of the cache counter: the call's own plus `gen_ai.token.type`
 * `input` and `gen_ai.token.cache` `read` or `creation`. The released GenAI
 * conventions have cache counts only as span attributes
 * (`gen_ai.usage.cache_read.input_tokens`, `…cache_creation…`); the pending
 * metric proposal partitions `gen_ai.client.token.usage` by a
 * `gen_ai.token.cache` attribute, whose values these follow. A counter of its
 * own, not more points on that histogram: its `input` points already count
 * the cached tokens, and sums by token type must stay right.
 */
interface CacheAttributes {
  read: Attributes;
  creation: Attributes;
}

/** The gateway's own time is small: finer buckets than a model call's. */
const OVERHEAD_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * The gateway's counters by surface, operation, provider and model (and
 * virtual key behind METRICS_PER_KEY): `agent_server.gateway.*` plus the
 * GenAI client metrics of its upstream calls.
 */
export class GatewayMetrics {
  private readonly requests: Counter;
  private readonly errors: Counter;
  private readonly costUsd: Counter;
  private readonly overhead: Histogram;
  private readonly cacheTokens: Counter;
  /** Made once per label combination, like ModelCallAttributes' own variants: recording allocates nothing. */
  private readonly cacheAttributes = new WeakMap<ModelCallAttributes, CacheAttributes>();

  constructor(
    meter: Meter,
    private readonly genai: GenAiMetrics,
  ) {
    this.requests = meter.createCounter('agent_server.gateway.requests', {
      description: 'Gateway model requests (chat, embeddings), whatever their outcome.',
      unit: '{request}',
    });
    this.errors = meter.createCounter('agent_server.gateway.errors', {
      description: 'Gateway model requests that did not succeed, by error.type (the HTTP status).',
      unit: '{request}',
    });
    this.costUsd = meter.createCounter('agent_server.gateway.cost', {
      description: 'Cost of gateway requests in US dollars, from the model’s price and the reported usage.',
      unit: 'USD',
    });
    this.overhead = meter.createHistogram('agent_server.gateway.overhead.duration', {
      description:
        'Time the gateway itself added to a request sent upstream: its handling time minus the upstream time.',
      unit: 's',
      advice: { explicitBucketBoundaries: OVERHEAD_BUCKETS },
    });
    this.cacheTokens = meter.createCounter('agent_server.gateway.cache.tokens', {
      description:
        'Input tokens the provider read from (gen_ai.token.cache=read) or wrote to (creation) its prompt cache; ' +
        'part of the input tokens of gen_ai.client.token.usage.',
      unit: '{token}',
    });
  }

  private cacheLabels(a: ModelCallAttributes): CacheAttributes {
    let c = this.cacheAttributes.get(a);
    if (!c) {
      const input = { ...a.base, 'gen_ai.token.type': 'input' };
      c = {
        read: { ...input, 'gen_ai.token.cache': 'read' },
        creation: { ...input, 'gen_ai.token.cache': 'creation' },
      };
      this.cacheAttributes.set(a, c);
    }
    return c;
  }

  /**
   * One request's end. `status`: what the caller got (499: it left; a broken
   * stream: its error event's status). `upstreamSeconds`: first upstream
   * attempt to the answer's end; `overheadSeconds`: the handler's time minus
   * that; both undefined when nothing was sent upstream.
   */
  end(
    a: ModelCallAttributes,
    status: number,
    upstreamSeconds: number | undefined,
    overheadSeconds: number | undefined,
    usage: CallUsage | undefined,
  ): void {
    this.requests.add(1, a.base);
    const errorType = status >= 400 ? String(status) : undefined;
    if (errorType !== undefined) this.errors.add(1, a.withError(errorType));
    if (upstreamSeconds !== undefined) this.genai.call(a, upstreamSeconds, errorType);
    if (overheadSeconds !== undefined) this.overhead.record(overheadSeconds, a.base);
    if (!usage) return;
    this.genai.usage(a, usage.input_tokens, usage.output_tokens);
    if (usage.cache_read_tokens) this.cacheTokens.add(usage.cache_read_tokens, this.cacheLabels(a).read);
    if (usage.cache_write_tokens)
      this.cacheTokens.add(usage.cache_write_tokens, this.cacheLabels(a).creation);
  }

  cost(a: ModelCallAttributes, usd: number): void {
    if (usd > 0) this.costUsd.add(usd, a.base);
  }
}
