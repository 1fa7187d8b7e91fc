import { context, TraceFlags } from '@opentelemetry/api';
import { ExportResultCode, suppressTracing, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace';

/** A SpanExporter is an ItemExporter<ReadableSpan>; the Postgres one takes spans already serialised. */
export interface ItemExporter<T> {
  export(items: T[], resultCallback: (result: ExportResult) => void): void;
  shutdown(): Promise<void>;
}

export interface BatchOptions {
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduleDelayMs: number;
  exportTimeoutMs: number;
}

export interface BatchStats {
  queued: number;
  exported: number;
  /** Spans refused because the queue was full. */
  dropped: number;
  /** Spans lost because their export failed or timed out. */
  failed: number;
}

/**
 * A batch span processor whose counters we can read: the SDK's keeps its drop
 * count private, and readiness must show it. `onEnd` only pushes to an array
 * (or counts a drop): a slow or dead exporter never blocks a request.
 * `toItem` may turn the span into its exported form at once: a queued span is
 * a tree of objects that outlives young-generation GC and costs old-generation
 * marking; a string or a small buffer does not.
 */
export class BoundedBatchProcessor<T = ReadableSpan> implements SpanProcessor {
  private queue: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  private exporting: Promise<void> | undefined;
  private stopped = false;
  private readonly counts = { exported: 0, dropped: 0, failed: 0 };

  constructor(
    readonly name: string,
    private readonly exporter: ItemExporter<T>,
    private readonly options: BatchOptions,
    private readonly onError: (err: unknown, lost: number) => void = () => undefined,
    private readonly toItem: (span: ReadableSpan) => T = (span) => span as T,
  ) {}

  onStart(_span: Span): void {}

  onEnd(span: ReadableSpan): void {
    if (this.stopped || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.queue.length >= this.options.maxQueueSize) {
      this.counts.dropped++;
      return;
    }
    this.queue.push(this.toItem(span));
    if (this.queue.length >= this.options.maxExportBatchSize) this.kick();
    else this.schedule();
  }

  stats(): BatchStats {
    return { queued: this.queue.length, ...this.counts };
  }

  async forceFlush(): Promise<void> {
    this.clearTimer();
    await this.exporting;
    if (this.queue.length > 0) {
      this.kick();
      await this.exporting;
    }
  }

  async shutdown(): Promise<void> {
    if (this.stopped) return;
    await this.forceFlush();
    this.stopped = true;
    this.clearTimer();
    await this.exporter.shutdown();
  }

  private schedule(): void {
    if (this.timer || this.exporting) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, this.options.scheduleDelayMs);
    // Pending spans must not keep a finished process alive.
    this.timer.unref();
  }

  private clearTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private kick(): void {
    if (this.exporting) return;
    this.clearTimer();
    this.exporting = this.drain().finally(() => {
      this.exporting = undefined;
      if (this.queue.length > 0 && !this.stopped) this.schedule();
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxExportBatchSize);
      const result = await this.exportBatch(batch);
      if (result.code === ExportResultCode.SUCCESS) this.counts.exported += batch.length;
      else {
        this.counts.failed += batch.length;
        this.onError(result.error, batch.length);
      }
    }
  }

  /** The exporter's own I/O (Postgres, HTTP) is not traced: that would feed spans back into this queue. */
  private exportBatch(batch: T[]): Promise<ExportResult> {
    return new Promise<ExportResult>((resolve) => {
      const timer = setTimeout(
        () =>
          resolve({
            code: ExportResultCode.FAILED,
            error: new Error(`export timed out after ${this.options.exportTimeoutMs} ms`),
          }),
        this.options.exportTimeoutMs,
      );
      timer.unref();
      try {
        context.with(suppressTracing(context.active()), () =>
          this.exporter.export(batch, (result) => {
            clearTimeout(timer);
            resolve(result);
          }),
        );
      } catch (err) {
        clearTimeout(timer);
        resolve({ code: ExportResultCode.FAILED, error: err as Error });
      }
    });
  }
}
