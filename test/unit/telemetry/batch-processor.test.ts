import { TraceFlags } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { BoundedBatchProcessor } from '../../../core/telemetry/batch-processor.js';

const span = (sampled = true) =>
  ({
    spanContext: () => ({
      traceId: '1'.repeat(32),
      spanId: '2'.repeat(16),
      traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    }),
  }) as unknown as ReadableSpan;

/** An exporter that holds every batch until released: a database that stopped answering. */
class StuckExporter implements SpanExporter {
  readonly pending: Array<() => void> = [];
  readonly batchSizes: number[] = [];
  exported = 0;
  export(spans: ReadableSpan[], cb: (r: ExportResult) => void): void {
    this.batchSizes.push(spans.length);
    this.pending.push(() => {
      this.exported += spans.length;
      cb({ code: ExportResultCode.SUCCESS });
    });
  }
  release(): void {
    for (const fn of this.pending.splice(0)) fn();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const options = { maxQueueSize: 4, maxExportBatchSize: 2, scheduleDelayMs: 10_000, exportTimeoutMs: 60_000 };

describe('bounded batch processor', () => {
  it('drops and counts spans beyond a tiny queue instead of blocking', async () => {
    const exporter = new StuckExporter();
    const p = new BoundedBatchProcessor('test', exporter, options);
    const started = performance.now();
    for (let i = 0; i < 1000; i++) p.onEnd(span());
    // Not a timing assertion on speed: onEnd returned 1000 times while the exporter never answered.
    expect(performance.now() - started).toBeLessThan(5_000);
    // The first full batch (2) went to the exporter; 4 wait in the queue; the rest were dropped.
    expect(p.stats()).toEqual({ queued: 4, exported: 0, dropped: 994, failed: 0 });
    exporter.release();
    const flushed = p.forceFlush();
    await new Promise((r) => setImmediate(r));
    exporter.release();
    await new Promise((r) => setImmediate(r));
    exporter.release();
    await flushed;
    expect(p.stats()).toEqual({ queued: 0, exported: 6, dropped: 994, failed: 0 });
    expect(exporter.exported).toBe(6);
  });

  it('ignores unsampled spans and counts failed and timed-out exports', async () => {
    const errors: number[] = [];
    const failing: SpanExporter = {
      export: (_s, cb) => cb({ code: ExportResultCode.FAILED, error: new Error('db down') }),
      shutdown: () => Promise.resolve(),
    };
    const p = new BoundedBatchProcessor('f', failing, options, (_e, lost) => errors.push(lost));
    p.onEnd(span(false));
    p.onEnd(span());
    p.onEnd(span());
    await p.forceFlush();
    expect(p.stats()).toMatchObject({ exported: 0, failed: 2, dropped: 0 });
    expect(errors).toEqual([2]);

    const silent = new BoundedBatchProcessor('t', new StuckExporter(), { ...options, exportTimeoutMs: 20 });
    silent.onEnd(span());
    await silent.forceFlush();
    expect(silent.stats()).toMatchObject({ exported: 0, failed: 1 });
  });

  it('sends full batches back to back and keeps a partial one for the timer or a flush', async () => {
    const exporter = new StuckExporter();
    const p = new BoundedBatchProcessor('b', exporter, {
      ...options,
      maxQueueSize: 100,
      maxExportBatchSize: 4,
    });
    const settle = () => new Promise((r) => setImmediate(r));
    for (let i = 0; i < 4; i++) p.onEnd(span());
    // A full batch goes at once; five more arrive while it is in flight.
    expect(exporter.batchSizes).toEqual([4]);
    for (let i = 0; i < 5; i++) p.onEnd(span());
    exporter.release();
    await settle();
    // The next full batch follows; the one span left does not go alone.
    expect(exporter.batchSizes).toEqual([4, 4]);
    exporter.release();
    await settle();
    expect(exporter.batchSizes).toEqual([4, 4]);
    expect(p.stats()).toEqual({ queued: 1, exported: 8, dropped: 0, failed: 0 });
    const flushed = p.forceFlush();
    await settle();
    exporter.release();
    await flushed;
    expect(exporter.batchSizes).toEqual([4, 4, 1]);
    expect(p.stats()).toEqual({ queued: 0, exported: 9, dropped: 0, failed: 0 });
  });

  it('sends a partial batch when the schedule delay has passed', async () => {
    const exporter = new StuckExporter();
    const p = new BoundedBatchProcessor('t', exporter, {
      ...options,
      maxExportBatchSize: 4,
      scheduleDelayMs: 20,
    });
    p.onEnd(span());
    p.onEnd(span());
    expect(exporter.batchSizes).toEqual([]);
    await new Promise((r) => setTimeout(r, 200));
    expect(exporter.batchSizes).toEqual([2]);
    exporter.release();
  });
});
