import { createTraceState, ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { TRACES_SAMPLERS, type TracesSampler } from '../../../core/config.js';
import {
  alwaysKeep,
  buildSampler,
  KEEP_KEY,
  keepVerdict,
  RecordOnlySampler,
  StorageSampler,
} from '../../../core/telemetry/sampler.js';

// TraceIdRatioBased XORs the id's four 32-bit words and keeps the trace when the result is below ratio × 2³².
const LOW = '0000000000000000000000000000000a'; // 0x0000000a: kept at any ratio above 0
const HIGH = 'fffffffe000000000000000000000001'; // 0xffffffff: kept only at ratio 1

function parent(sampled: boolean) {
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: HIGH,
    spanId: '00f067aa0ba902b7',
    traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
  });
}

function decide(name: TracesSampler, ratio: number, traceId: string, ctx = ROOT_CONTEXT) {
  const d = buildSampler(name, ratio).shouldSample(ctx, traceId, 'GET /x', SpanKind.SERVER, {}, []).decision;
  return d === SamplingDecision.RECORD_AND_SAMPLED;
}

describe('OTEL_TRACES_SAMPLER', () => {
  it('builds every standard sampler, deciding root spans as the specification says', () => {
    const table: Array<[TracesSampler, number, string, boolean]> = [
      ['always_on', 1, HIGH, true],
      ['always_off', 1, LOW, false],
      ['traceidratio', 0.5, LOW, true],
      ['traceidratio', 0.5, HIGH, false],
      ['traceidratio', 0, LOW, false],
      ['traceidratio', 1, HIGH, true],
      ['parentbased_always_on', 1, HIGH, true],
      ['parentbased_always_off', 1, LOW, false],
      ['parentbased_traceidratio', 0.5, LOW, true],
      ['parentbased_traceidratio', 0.5, HIGH, false],
    ];
    for (const [name, ratio, id, kept] of table)
      expect(decide(name, ratio, id), `${name} ${ratio} ${id}`).toBe(kept);
    // Every accepted name is covered above.
    expect(new Set(table.map(([n]) => n))).toEqual(new Set(TRACES_SAMPLERS));
  });

  it('parent-based samplers follow an incoming sampled flag; the others decide by themselves', () => {
    for (const name of [
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ] as const) {
      expect(decide(name, 0, HIGH, parent(true)), name).toBe(true);
      expect(decide(name, 1, HIGH, parent(false)), name).toBe(false);
    }
    expect(decide('traceidratio', 0.5, HIGH, parent(true))).toBe(false);
    expect(decide('always_on', 1, HIGH, parent(false))).toBe(true);
  });
});

describe('StorageSampler: record everything, carry the storage verdict in the trace state', () => {
  const storage = (name: TracesSampler, ratio: number) => new StorageSampler(buildSampler(name, ratio));
  const sample = (s: StorageSampler, traceId: string, ctx = ROOT_CONTEXT) =>
    s.shouldSample(ctx, traceId, 'GET /x', SpanKind.SERVER, {}, []);

  it("records and samples every span (so it is counted), the configured sampler's verdict as agent-server=1/0", () => {
    const s = storage('parentbased_traceidratio', 0.5);
    const kept = sample(s, LOW);
    const dropped = sample(s, HIGH);
    for (const r of [kept, dropped]) expect(r.decision).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(kept.traceState?.get(KEEP_KEY)).toBe('1');
    expect(dropped.traceState?.get(KEEP_KEY)).toBe('0');
    expect(keepVerdict({ ...parentContext(), traceState: dropped.traceState })).toBe(false);
    expect(keepVerdict(parentContext())).toBeUndefined();
  });

  it("inherits a parent's verdict (the span then takes the parent's trace state), whatever the ratio", () => {
    const s = storage('parentbased_traceidratio', 1);
    const ctx = trace.setSpanContext(ROOT_CONTEXT, {
      ...parentContext(),
      traceState: createTraceState('vendor=x').set(KEEP_KEY, '0'),
    });
    const r = sample(s, LOW, ctx);
    expect(r).toEqual({ decision: SamplingDecision.RECORD_AND_SAMPLED });
  });

  it("asks the configured sampler when the parent is a caller's (its sampled flag, parent-based)", () => {
    const s = storage('parentbased_traceidratio', 0);
    const ctx = trace.setSpanContext(ROOT_CONTEXT, {
      ...parentContext(),
      traceState: createTraceState('vendor=x'),
    });
    const r = sample(s, HIGH, ctx);
    expect(r.decision).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    // The caller's entries stay; ours is added.
    expect(r.traceState?.get('vendor')).toBe('x');
    expect(r.traceState?.get(KEEP_KEY)).toBe('1');
  });

  it('marks an agent turn kept over a parent that said drop', () => {
    const s = storage('always_off', 0);
    const parent = trace.setSpanContext(ROOT_CONTEXT, {
      ...parentContext(),
      traceState: createTraceState().set(KEEP_KEY, '0'),
    });
    expect(sample(s, LOW, alwaysKeep(parent)).traceState?.get(KEEP_KEY)).toBe('1');
    expect(sample(s, LOW, alwaysKeep(ROOT_CONTEXT)).traceState?.get(KEEP_KEY)).toBe('1');
  });

  it('with tracing off, records every span (counted) and samples none', () => {
    expect(new RecordOnlySampler().shouldSample().decision).toBe(SamplingDecision.RECORD);
  });
});

function parentContext() {
  return { traceId: HIGH, spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED, isRemote: true };
}
