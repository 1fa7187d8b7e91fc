import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Attributes, BatchObservableResult, Meter, Observable } from '@opentelemetry/api';
import { poolStats } from '../../db/pool-stats.js';
import type { TelemetryStats } from '../telemetry.js';

/**
 * The process's internals, read at each collection (nothing on any request
 * path): event-loop delay, the PostgreSQL pools, the span export queues.
 */
export function observeRuntime(
  meter: Meter,
  spanStats: () => TelemetryStats | undefined,
  queueCapacity: number,
): () => void {
  const stops = [
    observeEventLoop(meter),
    observePools(meter),
    observeSpanQueues(meter, spanStats, queueCapacity),
  ];
  return () => stops.forEach((stop) => stop());
}

function batch(meter: Meter, observables: Observable[], callback: (r: BatchObservableResult) => void) {
  meter.addBatchObservableCallback(callback, observables);
  return () => meter.removeBatchObservableCallback(callback, observables);
}

/**
 * `nodejs.eventloop.delay.*` (the Node.js runtime conventions' names), in
 * seconds, over the time since the previous collection: the histogram is
 * reset after each read, so a value says how the loop did lately. Sampled
 * every 20 ms, so a delay shorter than that may go unseen.
 */
function observeEventLoop(meter: Meter): () => void {
  const resolutionMs = 20;
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  const gauge = (name: string, what: string) =>
    meter.createObservableGauge(`nodejs.eventloop.delay.${name}`, {
      description: `Event loop delay, ${what}, since the previous collection.`,
      unit: 's',
    });
  const stats = {
    min: gauge('min', 'minimum'),
    max: gauge('max', 'maximum'),
    mean: gauge('mean', 'mean'),
    p50: gauge('p50', '50th percentile'),
    p90: gauge('p90', '90th percentile'),
    p99: gauge('p99', '99th percentile'),
  };
  const stop = batch(meter, Object.values(stats), (r) => {
    if (histogram.count === 0) return;
    // Node records each interval between its timer's ticks, the timer's own period included.
    const s = (ns: number) => Math.max(0, ns / 1e6 - resolutionMs) / 1e3;
    r.observe(stats.min, s(histogram.min));
    r.observe(stats.max, s(histogram.max));
    r.observe(stats.mean, s(histogram.mean));
    r.observe(stats.p50, s(histogram.percentile(50)));
    r.observe(stats.p90, s(histogram.percentile(90)));
    r.observe(stats.p99, s(histogram.percentile(99)));
    histogram.reset();
  });
  return () => {
    stop();
    histogram.disable();
  };
}

/** `db.client.connection.*` (database client conventions) for each Knex pool, by pool name. */
function observePools(meter: Meter): () => void {
  const count = meter.createObservableUpDownCounter('db.client.connection.count', {
    description: 'PostgreSQL connections of the pool, by db.client.connection.state (used, idle).',
    unit: '{connection}',
  });
  const pending = meter.createObservableUpDownCounter('db.client.connection.pending_requests', {
    description: 'Callers waiting for a PostgreSQL connection of the pool.',
    unit: '{request}',
  });
  const max = meter.createObservableUpDownCounter('db.client.connection.max', {
    description: 'The most connections the pool may open.',
    unit: '{connection}',
  });
  const attrs = new Map<string, { pool: Attributes; used: Attributes; idle: Attributes }>();
  const of = (name: string) => {
    let a = attrs.get(name);
    if (!a) {
      const pool = { 'db.client.connection.pool.name': name };
      a = {
        pool,
        used: { ...pool, 'db.client.connection.state': 'used' },
        idle: { ...pool, 'db.client.connection.state': 'idle' },
      };
      attrs.set(name, a);
    }
    return a;
  };
  return batch(meter, [count, pending, max], (r) => {
    for (const s of poolStats()) {
      const a = of(s.name);
      r.observe(count, s.used, a.used);
      r.observe(count, s.idle, a.idle);
      r.observe(pending, s.pending, a.pool);
      r.observe(max, s.max, a.pool);
    }
  });
}

/**
 * The span export queues (core/telemetry/batch-processor.ts), under the SDK
 * self-observability names: queue size and capacity, spans processed
 * (`error.type=queue_full`: dropped), spans exported (`error.type=export_failed`: lost).
 */
function observeSpanQueues(
  meter: Meter,
  spanStats: () => TelemetryStats | undefined,
  capacity: number,
): () => void {
  const size = meter.createObservableUpDownCounter('otel.sdk.processor.span.queue.size', {
    description: 'Spans waiting in the export queue.',
    unit: '{span}',
  });
  const cap = meter.createObservableUpDownCounter('otel.sdk.processor.span.queue.capacity', {
    description: 'Spans the export queue holds before it drops (OTEL_BSP_MAX_QUEUE_SIZE).',
    unit: '{span}',
  });
  const processed = meter.createObservableCounter('otel.sdk.processor.span.processed', {
    description:
      'Spans the queue handed to its exporter, or dropped (error.type=queue_full) because it was full.',
    unit: '{span}',
  });
  const exported = meter.createObservableCounter('otel.sdk.exporter.span.exported', {
    description: 'Spans exported, or lost (error.type=export_failed) because their export failed.',
    unit: '{span}',
  });
  const attrs = new Map<string, { ok: Attributes; full: Attributes; failed: Attributes }>();
  const of = (name: string) => {
    let a = attrs.get(name);
    if (!a) {
      const ok = { 'otel.component.type': 'batching_span_processor', 'otel.component.name': name };
      a = {
        ok,
        full: { ...ok, 'error.type': 'queue_full' },
        failed: { ...ok, 'error.type': 'export_failed' },
      };
      attrs.set(name, a);
    }
    return a;
  };
  return batch(meter, [size, cap, processed, exported], (r) => {
    const stats = spanStats();
    if (!stats) return;
    for (const [name, s] of Object.entries(stats.exporters)) {
      const a = of(name);
      r.observe(size, s.queued, a.ok);
      r.observe(cap, capacity, a.ok);
      r.observe(processed, s.exported + s.failed, a.ok);
      r.observe(processed, s.dropped, a.full);
      r.observe(exported, s.exported, a.ok);
      r.observe(exported, s.failed, a.failed);
    }
  });
}
