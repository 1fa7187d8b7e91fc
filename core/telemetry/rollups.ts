import { context } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Logger } from '../logger.js';
import type { TraceRollupRow, TraceRollupsRepository } from '../repositories/trace-rollups.repository.js';
import { keyId, RollupAggregator, rollupOf, type RollupCell } from './rollup-aggregator.js';
import { bucketsToJson } from './rollup-histogram.js';

export interface RollupStats {
  interval_ms: number;
  /** Keys counted since the last flush. */
  pending_keys: number;
  /** Rows added to `trace_rollups` since start. */
  flushed_rows: number;
  /** Flushes that failed; their counts were kept for the next one. */
  failed_flushes: number;
  /** Spans not counted because too many distinct keys arrived within one interval. */
  dropped_spans: number;
  last_flush_at: string | null;
}

/** Rows per upsert statement. */
const CHUNK = 500;

const toRow = (c: RollupCell): TraceRollupRow => ({
  minute: new Date(c.minute).toISOString(),
  service_name: c.serviceName,
  span_name: c.spanName,
  span_kind: c.spanKind,
  project_id: c.projectId,
  status: c.status,
  entry: c.entry,
  provider: c.provider,
  model: c.model,
  virtual_key_id: c.virtualKeyId,
  console: c.console,
  count: c.count,
  sum_ms: c.sumMs,
  min_ms: c.minMs,
  max_ms: c.maxMs,
  buckets: bucketsToJson(c.buckets),
  input_tokens: c.inputTokens,
  output_tokens: c.outputTokens,
  cost_usd: c.costUsd,
});

/**
 * Counting, separate from tracing: every span this process ends, stored or
 * not, is added to an in-process aggregate, and every `intervalMs` (and on
 * shutdown, and before this process answers a statistics request) the
 * aggregate is added to `trace_rollups`. A process that dies loses what it
 * counted since its last flush — one interval at most; a failed flush keeps
 * its counts for the next one.
 */
export class TraceRollups {
  private readonly aggregator: RollupAggregator;
  private timer: NodeJS.Timeout | undefined;
  private queue: Promise<void> = Promise.resolve();
  private flushedRows = 0;
  private failedFlushes = 0;
  private lastFlushAt: Date | undefined;
  private lastErrorLog = 0;

  constructor(
    private readonly repo: Pick<TraceRollupsRepository, 'add'>,
    private readonly options: { intervalMs: number; logger?: Logger; maxKeys?: number },
  ) {
    this.aggregator = new RollupAggregator(options.maxKeys);
  }

  /** Starts the periodic flush. */
  start(): this {
    this.timer ??= setInterval(() => void this.flush(), this.options.intervalMs);
    this.timer.unref();
    return this;
  }

  /** Counts one finished span (already redacted). `fromWorkflowSink`: a Temporal workflow span. */
  record(span: ReadableSpan, fromWorkflowSink = false): void {
    const [key, observation] = rollupOf(span, fromWorkflowSink);
    this.aggregator.add(key, observation);
  }

  /** Adds what was counted so far to the table. Flushes run one at a time; never rejects. */
  flush(): Promise<void> {
    const run = this.queue.then(() => this.flushOnce());
    this.queue = run;
    return run;
  }

  stats(): RollupStats {
    return {
      interval_ms: this.options.intervalMs,
      pending_keys: this.aggregator.size,
      flushed_rows: this.flushedRows,
      failed_flushes: this.failedFlushes,
      dropped_spans: this.aggregator.dropped,
      last_flush_at: this.lastFlushAt?.toISOString() ?? null,
    };
  }

  /** Stops the timer and flushes what is left. */
  async shutdown(): Promise<void> {
    this.stop();
    await this.flush();
  }

  /** Stops the timer without flushing (what a killed process amounts to). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async flushOnce(): Promise<void> {
    const cells = this.aggregator.drain();
    if (cells.length === 0) return;
    const keyed = cells.map((c) => [keyId(c), c] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1));
    for (let i = 0; i < keyed.length; i += CHUNK) {
      const chunk = keyed.slice(i, i + CHUNK).map(([, c]) => toRow(c));
      try {
        // Housekeeping, not traffic: neither traced nor counted.
        await context.with(suppressTracing(context.active()), () => this.repo.add(chunk));
        this.flushedRows += chunk.length;
      } catch (err) {
        // The statement counted nothing: this chunk and the rest go with the next flush.
        for (const [, c] of keyed.slice(i)) this.aggregator.merge(c);
        this.failedFlushes++;
        this.logError(err);
        return;
      }
    }
    this.lastFlushAt = new Date();
  }

  /** At most one line a minute: a database outage must not flood the log. */
  private logError(err: unknown): void {
    const now = Date.now();
    if (now - this.lastErrorLog < 60_000) return;
    this.lastErrorLog = now;
    this.options.logger?.warn({ err }, 'trace rollup flush failed; counts kept for the next flush');
  }
}
