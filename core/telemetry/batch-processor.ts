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
      this.kick(true);
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
      this.kick(true);
    }, this.options.scheduleDelayMs);
    // Pending spans must not keep a finished process alive.
    this.timer.unref();
  }

  private clearTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Exports full batches back to back; `all` (the timer, a flush) also what
   * is queued now, the last batch partial. A partial batch otherwise waits for the timer or until
   * it fills: exporting whatever had queued during the previous export made
   * batches of ~110 spans at a gateway's rate instead of 512 (counted in
   * Postgres's commits), and each COPY costs Postgres a transaction and a WAL
   * flush of its own. The SDK's batch processor waits the same way.
   */
  private kick(all = false): void {
    if (this.exporting) return;
    this.clearTimer();
    this.exporting = this.drain(all ? this.queue.length : 0).finally(() => {
      this.exporting = undefined;
      if (this.stopped || this.queue.length === 0) return;
      if (this.queue.length >= this.options.maxExportBatchSize) this.kick();
      else this.schedule();
    });
  }

  /** `owed`: spans to export even if the last batch is partial. */
  private async drain(owed: number): Promise<void> {
    while (owed > 0 || this.queue.length >= this.options.maxExportBatchSize) {
      const batch = this.queue.splice(0, this.options.maxExportBatchSize);
      owed -= batch.length;
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
