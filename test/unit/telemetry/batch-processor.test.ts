import { TraceFlags } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { BoundedBatchProcessor } from '../../../api/telemetry/batch-processor.js';

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
  exported = 0;
  export(spans: ReadableSpan[], cb: (r: ExportResult) => void): void {
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
});
