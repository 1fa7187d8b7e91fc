import {
  context,
  createTraceState,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { alwaysKeep, buildSampler, KEEP_KEY, StorageSampler } from '../../../core/telemetry/sampler.js';
import { TraceKeeper, type KeeperOptions } from '../../../core/telemetry/trace-keeper.js';
import { fakeSpan } from '../../helpers/fake-span.js';

/** A provider whose spans go through the keeper, as in telemetry.ts; `stored` is what reaches the exporters. */
function setup(ratio: number, options: Partial<KeeperOptions> = {}) {
  const stored: ReadableSpan[] = [];
  const keeper = new TraceKeeper((s) => stored.push(s), { keepSlowMs: 1_000, ...options });
  const provider = new TracerProvider({
    sampler: new StorageSampler(buildSampler('parentbased_traceidratio', ratio)),
    spanProcessors: [
      {
        onStart: (span) => keeper.onStart(span),
        onEnd: (span) => keeper.onEnd(span, span, false),
        forceFlush: () => Promise.resolve(),
        shutdown: () => Promise.resolve(),
      },
    ],
  });
  const tracer = provider.getTracer('test');
  const start = (name: string, parent?: Span | Context, startTime = Date.now()): Span =>
    tracer.startSpan(
      name,
      { startTime },
      parent === undefined
        ? ROOT_CONTEXT
        : 'spanContext' in parent
          ? trace.setSpan(ROOT_CONTEXT, parent)
          : parent,
    );
  const names = () => stored.map((s) => s.name).sort();
  keepers.push(keeper);
  return { keeper, start, stored, names };
}

const keepers: TraceKeeper[] = [];
afterEach(() => {
  for (const k of keepers.splice(0)) k.shutdown();
});

const nextTick = () => new Promise((r) => setImmediate(r));

describe('trace keeper: which traces are stored', () => {
  it('stores nothing of an ordinary trace the ratio drops, once its local root has ended', async () => {
    const { keeper, start, stored } = setup(0);
    const root = start('GET /x');
    start('query', root).end();
    expect(keeper.stats()).toMatchObject({ held_traces: 1, held_spans: 1 });
    root.end();
    await nextTick();
    expect(stored).toEqual([]);
    expect(keeper.stats()).toMatchObject({ held_traces: 0, held_spans: 0, dropped_traces: 1 });
  });

  it('stores the whole local trace when its root ends in error, or lasts TRACE_KEEP_SLOW_MS', async () => {
    const { keeper, start, names } = setup(0, { keepSlowMs: 500 });
    const failed = start('POST /fail');
    start('query', failed).end();
    failed.setStatus({ code: SpanStatusCode.ERROR });
    failed.end();
    const t0 = Date.now();
    const slow = start('GET /slow', undefined, t0);
    start('query slow', slow, t0).end(t0 + 10);
    slow.end(t0 + 500);
    const quick = start('GET /quick', undefined, t0);
    quick.end(t0 + 499);
    // A child's error is not the root's: the request answered.
    const handled = start('GET /handled');
    start('failed query', handled).setStatus({ code: SpanStatusCode.ERROR }).end();
    handled.end();
    await nextTick();
    expect(names()).toEqual(['GET /slow', 'POST /fail', 'query', 'query slow']);
    expect(keeper.stats()).toMatchObject({ kept_for_error: 1, kept_for_slowness: 1, dropped_traces: 2 });
  });

  it('passes a trace the ratio keeps straight through, before its root ends', () => {
    const { start, names } = setup(1);
    const root = start('GET /x');
    start('query', root).end();
    expect(names()).toEqual(['query']);
    root.end();
    expect(names()).toEqual(['GET /x', 'query']);
  });

  it('stores an agent turn whole, spans before the turn began included, and says so downstream', () => {
    const { start, names, stored } = setup(0);
    const root = start('POST /converse');
    start('insert run', root).end();
    const update = start('UpdateWithStartWorkflow:converse', alwaysKeep(trace.setSpan(ROOT_CONTEXT, root)));
    expect(update.spanContext().traceState?.get(KEEP_KEY)).toBe('1');
    expect(update.spanContext().traceFlags).toBe(TraceFlags.SAMPLED);
    expect(names()).toEqual(['insert run']);
    update.end();
    start('read events', root).end();
    root.end();
    expect(names()).toEqual([
      'POST /converse',
      'UpdateWithStartWorkflow:converse',
      'insert run',
      'read events',
    ]);
    expect(new Set(stored.map((s) => s.spanContext().traceId)).size).toBe(1);
  });

  it('follows the verdict a remote parent carries, and treats that span as a local root', async () => {
    const { start, names } = setup(1);
    let n = 0;
    const remote = (keep: '0' | '1') =>
      trace.setSpanContext(ROOT_CONTEXT, {
        traceId: `${++n}`.padStart(32, '0'),
        spanId: '00000000000000a1',
        traceFlags: TraceFlags.SAMPLED,
        isRemote: true,
        traceState: createTraceState().set(KEEP_KEY, keep),
      });
    // The ratio (1) would keep both; the verdict decides.
    start('RunActivity:kept', remote('1')).end();
    start('RunActivity:dropped', remote('0')).end();
    const failing = start('RunActivity:failed', remote('0'));
    failing.setStatus({ code: SpanStatusCode.ERROR });
    failing.end();
    await nextTick();
    expect(names()).toEqual(['RunActivity:failed', 'RunActivity:kept']);
  });

  it("stores a kept trace's late spans, and judges a dropped trace's late spans on their own", async () => {
    const { start, names } = setup(0);
    const failed = start('POST /fail');
    const lateChild = start('fire and forget', failed);
    failed.setStatus({ code: SpanStatusCode.ERROR });
    failed.end();
    // The trace is still open (a child runs on), so nothing is decided yet.
    await nextTick();
    expect(names()).toEqual([]);
    lateChild.end();
    await nextTick();
    expect(names()).toEqual(['POST /fail', 'fire and forget']);

    const ok = start('GET /ok');
    ok.end();
    await nextTick();
    const afterwards = start('background', ok);
    afterwards.end();
    await nextTick();
    expect(names()).toEqual(['POST /fail', 'fire and forget']);
  });

  it('groups workflow spans that arrive together from the sink, and keeps them for an error', async () => {
    const { keeper, stored } = setup(0);
    const traceId = 'b'.repeat(32);
    const verdict = createTraceState().set(KEEP_KEY, '0');
    const sink = (name: string, error = false) =>
      fakeSpan({
        name,
        durationMs: 5,
        traceId,
        traceState: verdict,
        error,
        parent: { spanId: 'c'.repeat(16) },
      });
    for (const s of [sink('StartActivity:callModel'), sink('HandleUpdate:converse', true)])
      keeper.onEnd(s, s, true);
    const alone = fakeSpan({ name: 'RunWorkflow:other', durationMs: 5, traceState: verdict });
    keeper.onEnd(alone, alone, true);
    await nextTick();
    expect(stored.map((s) => s.name).sort()).toEqual(['HandleUpdate:converse', 'StartActivity:callModel']);
  });

  it('bounds what it holds: per trace, in all (oldest decided first), and in time', async () => {
    const { keeper, start, names } = setup(0, { maxSpansPerTrace: 3, maxHeldSpans: 5, maxHoldMs: 50 });
    const big = start('GET /big');
    for (let i = 0; i < 5; i++) start(`q${i}`, big).end();
    expect(keeper.stats()).toMatchObject({ held_spans: 3, lost_spans: 2 });
    const other = start('GET /other');
    for (let i = 0; i < 3; i++) start(`o${i}`, other).end();
    // Holding 6 would exceed 5: the oldest trace (big) was decided early, and dropped.
    expect(keeper.stats()).toMatchObject({ held_traces: 1, held_spans: 3, dropped_traces: 1 });
    big.setStatus({ code: SpanStatusCode.ERROR });
    big.end(); // judged alone now: an error root, stored
    await nextTick();
    expect(names()).toEqual(['GET /big']);
    // A trace whose root never ends is let go after maxHoldMs.
    await new Promise((r) => setTimeout(r, 120));
    (keeper as unknown as { sweep(): void }).sweep();
    expect(keeper.stats()).toMatchObject({ held_traces: 0, held_spans: 0 });
    void other;
  });

  it('settles on demand (a flush) and on shutdown', () => {
    const { keeper, start, names } = setup(0);
    const failed = start('GET /fail');
    failed.setStatus({ code: SpanStatusCode.ERROR });
    failed.end();
    keeper.settleNow();
    expect(names()).toEqual(['GET /fail']);
    const open = start('GET /open');
    open.setStatus({ code: SpanStatusCode.ERROR });
    start('child', open).end();
    keeper.shutdown();
    expect(names()).toEqual(['GET /fail']); // the open root never ended: nothing says keep
    void context;
  });
});
