import {
  createContextKey,
  createTraceState,
  trace,
  type Attributes,
  type Context,
  type Link,
  type SpanContext,
  type SpanKind,
  type TraceState,
} from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SamplingResult,
} from '@opentelemetry/sdk-trace';
import type { TracesSampler } from '../config.js';

/**
 * The sampler OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG name, as the
 * OpenTelemetry SDK environment specification defines them (the JS SDK no
 * longer reads them itself). Its verdict decides which traces are *stored*
 * (`StorageSampler` below); the trace statistics count every span whatever it
 * says. The `parentbased_` ones follow an incoming `traceparent`'s sampled
 * flag, so a caller's decision holds across services.
 */
export function buildSampler(name: TracesSampler, ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

/**
 * The tracestate entry (`agent-server=1` keep, `=0` drop) that carries the
 * storage verdict of a trace's first span in our services to every later span,
 * in this process and in the next (Temporal headers, the worker's activities).
 */
export const KEEP_KEY = 'agent-server';

/** The verdict a span context carries: true keep, false drop, undefined none of ours. */
export function keepVerdict(sc: SpanContext | undefined): boolean | undefined {
  const v = sc?.traceState?.get(KEEP_KEY);
  return v === '1' ? true : v === '0' ? false : undefined;
}

const ALWAYS_KEEP = createContextKey('agent-server.always-keep');

/** A context in which new spans mark their trace as always stored (an agent turn: see converse). */
export function alwaysKeep(ctx: Context): Context {
  return ctx.setValue(ALWAYS_KEEP, true);
}

/** Trace states are immutable: a trace entering without one (the usual case) shares one of these. */
const KEEP_STATE = createTraceState().set(KEEP_KEY, '1');
const DROP_STATE = createTraceState().set(KEEP_KEY, '0');

const withVerdict = (ts: TraceState | undefined, keep: boolean): TraceState =>
  ts ? ts.set(KEEP_KEY, keep ? '1' : '0') : keep ? KEEP_STATE : DROP_STATE;

/**
 * Records every span, so the statistics count what is not stored, and says in
 * the trace state whether the trace is to be stored. Every span is also
 * *sampled* in the W3C sense (flag 01): Temporal's workflow sandbox records
 * only sampled traces, and its spans must be counted too. The verdict is
 * taken once, where a trace enters our services: from `alwaysKeep` (agent
 * turns), else from the configured sampler; later spans inherit it through
 * their parent's trace state, across processes. The span processor
 * (trace-keeper.ts) stores a kept trace as it goes and holds the others until
 * their local root ends, to store them all the same when it failed or was slow.
 */
export class StorageSampler implements Sampler {
  constructor(private readonly verdict: Sampler) {}

  shouldSample(
    ctx: Context,
    traceId: string,
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    const parent = trace.getSpanContext(ctx);
    const inherited = keepVerdict(parent);
    if (ctx.getValue(ALWAYS_KEEP) === true && inherited !== true)
      return {
        decision: SamplingDecision.RECORD_AND_SAMPLED,
        traceState: withVerdict(parent?.traceState, true),
      };
    if (inherited !== undefined) return { decision: SamplingDecision.RECORD_AND_SAMPLED };
    const keep =
      this.verdict.shouldSample(ctx, traceId, name, kind, attributes, links).decision ===
      SamplingDecision.RECORD_AND_SAMPLED;
    return {
      decision: SamplingDecision.RECORD_AND_SAMPLED,
      traceState: withVerdict(parent?.traceState, keep),
    };
  }

  toString(): string {
    return `StorageSampler{${this.verdict.toString()}}`;
  }
}

/** Tracing off, counting on (OTEL_SDK_DISABLED with metrics enabled): record every span, store none. */
export class RecordOnlySampler implements Sampler {
  shouldSample(): SamplingResult {
    return { decision: SamplingDecision.RECORD };
  }

  toString(): string {
    return 'RecordOnlySampler';
  }
}
