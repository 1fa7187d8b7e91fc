import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { isTracingSuppressed, suppressTracing, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import {
  TracerProvider,
  type ReadableSpan,
  type Sampler,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import type { Config } from '../config.js';
import { createDb, type Db } from '../db/knex.js';
import type { Logger } from '../logger.js';
import { TraceRollupsRepository } from '../repositories/trace-rollups.repository.js';
import { BoundedBatchProcessor, type BatchStats } from './batch-processor.js';
import { PostgresSpanExporter, pruneSpans } from './postgres-exporter.js';
import { RoleRoutingTracerProvider } from './role-router.js';
import { TraceRollups, type RollupStats } from './rollups.js';
import { buildSampler, RecordOnlySampler, StorageSampler } from './sampler.js';
import { redactSpan } from './span-redaction.js';
import { spanToCopyLine, type AnyReadableSpan } from './span-row.js';
import { TraceKeeper, type KeeperStats } from './trace-keeper.js';
import { recordContentEverywhere, stampInherited, stampWorkflowSpan } from './turn-context.js';

export type Role = 'api' | 'worker';

export const DEFAULT_SERVICE_NAMES: Record<Role, string> = {
  api: 'agent-server-api',
  worker: 'agent-server-worker',
};

/** The span storage in force, for readiness: the sampler, what is stored whatever it says, and what happened. */
export interface SamplingStats extends KeeperStats {
  sampler: string;
  /** OTEL_TRACES_SAMPLER_ARG, for the ratio samplers; null otherwise. */
  ratio: number | null;
  /** Stored whatever the sampler says. */
  always_stored: string[];
  keep_slow_ms: number;
}

export interface TelemetryStats {
  /** Spans are stored (and exported); false with OTEL_SDK_DISABLED, where only the counting runs. */
  enabled: boolean;
  /** OTEL_TRACES_SAMPLER (and its ratio, for the ratio samplers); absent with tracing off. */
  sampler?: string;
  sampling?: SamplingStats;
  /** Spans refused by a full queue, over all exporters, since start. */
  dropped_spans: number;
  exporters: Record<string, BatchStats>;
  /** The statistics' counting (rollups.ts); absent with METRICS_ENABLED=false. */
  rollups?: RollupStats;
}

/** Temporal's workflow spans arrive through its sink in the 1.x shape, without an instrumentation scope. */
const fromWorkflowSink = (span: ReadableSpan) => span.instrumentationScope === undefined;

/**
 * Tracing and counting for one process. Tracing: one pipeline (the sampling
 * keeper, then bounded queues to Postgres and, when configured, OTLP/HTTP)
 * shared by one TracerProvider per role, so spans keep their role's service
 * name when api and worker run in the same process. Counting: every span
 * ended, stored or not, is added to the rollups behind the statistics.
 */
export class Telemetry {
  /** Spans are stored; false with OTEL_SDK_DISABLED (only counted). */
  readonly tracing: boolean;
  private readonly providers = new Map<Role, { provider: TracerProvider; resource: Resource }>();
  private readonly router: RoleRoutingTracerProvider;
  private readonly processors: Array<BoundedBatchProcessor<ReadableSpan> | BoundedBatchProcessor<Buffer>> =
    [];
  private readonly keeper: TraceKeeper | undefined;
  private readonly rollups: TraceRollups | undefined;
  private readonly rollupsRepo: TraceRollupsRepository;
  private readonly db: Db;
  private readonly pruneTimer: NodeJS.Timeout;
  private lastErrorLog = 0;

  constructor(
    readonly config: Config,
    private readonly logger: Logger,
    firstRole: Role,
  ) {
    const otel = config.otel;
    // Its own small pool: exports never compete with requests for connections.
    this.db = createDb(config.databaseUrl!, { max: 2, name: 'telemetry', ssl: config.database.ssl });
    const batch = {
      maxQueueSize: otel.maxQueueSize,
      maxExportBatchSize: otel.maxExportBatchSize,
      scheduleDelayMs: otel.scheduleDelayMs,
      exportTimeoutMs: otel.exportTimeoutMs,
    };
    const onError = (name: string) => (err: unknown, lost: number) => this.logExportError(name, err, lost);
    this.tracing = !otel.disabled;
    recordContentEverywhere(otel.recordContent);
    this.rollupsRepo = new TraceRollupsRepository(this.db);
    if (config.metrics.enabled)
      this.rollups = new TraceRollups(this.rollupsRepo, {
        intervalMs: otel.rollupIntervalMs,
        logger,
      }).start();
    if (this.tracing) {
      this.processors.push(
        new BoundedBatchProcessor(
          'postgres',
          new PostgresSpanExporter(this.db),
          batch,
          onError('postgres'),
          spanToCopyLine,
        ),
      );
      const processors = this.processors;
      this.keeper = new TraceKeeper(
        (span) => {
          for (const p of processors) p.onEnd(span);
        },
        { keepSlowMs: otel.keepSlowMs },
      );
    }
    if (this.tracing && otel.otlpEndpoint) {
      const url = `${otel.otlpEndpoint.replace(/\/+$/, '')}/v1/traces`;
      this.processors.push(
        new BoundedBatchProcessor(
          'otlp',
          new OTLPTraceExporter({ url, timeoutMillis: otel.exportTimeoutMs }),
          batch,
          onError('otlp'),
        ),
      );
    }
    this.router = new RoleRoutingTracerProvider(this.providerFor(firstRole));
    const first = this.providers.get(firstRole)!;
    this.router.add(first.resource, first.provider);
    this.pruneTimer = setInterval(() => void this.prune(), otel.pruneIntervalMs);
    this.pruneTimer.unref();
  }

  /**
   * The processor every role's provider (and Temporal's workflow span sink)
   * feeds. A span starting takes what its context says it inherits (a turn's
   * ids, turn-context.ts). Credentials are redacted here, before the rollups
   * or any exporter see the span; every span is counted, and the keeper
   * decides which are stored.
   */
  get spanProcessor(): SpanProcessor {
    const { processors, keeper, rollups } = this;
    return {
      onStart: (span, parentContext) => {
        stampInherited(span, parentContext);
        keeper?.onStart(span);
      },
      onEnd: (span: ReadableSpan) => {
        const sink = fromWorkflowSink(span);
        if (sink) stampWorkflowSpan(span);
        const stored = redactSpan(normalize(span));
        rollups?.record(stored, sink);
        keeper?.onEnd(stored, span, sink);
      },
      forceFlush: async () => {
        keeper?.settleNow();
        await Promise.all(processors.map((p) => p.forceFlush()));
      },
      shutdown: () => Promise.resolve(),
    };
  }

  get globalProvider(): RoleRoutingTracerProvider {
    return this.router;
  }

  resource(role: Role): Resource {
    this.providerFor(role);
    return this.providers.get(role)!.resource;
  }

  /** A tracer whose parentless spans belong to `role` (entry points: HTTP server spans, activities). */
  tracer(role: Role, name = 'agent-server'): Tracer {
    return this.providerFor(role).getTracer(name);
  }

  serviceName(role: Role): string {
    return this.config.otel.serviceName ?? DEFAULT_SERVICE_NAMES[role];
  }

  stats(): TelemetryStats {
    const exporters = Object.fromEntries(this.processors.map((p) => [p.name, p.stats()]));
    const dropped = Object.values(exporters).reduce((n, s) => n + s.dropped, 0);
    const out: TelemetryStats = { enabled: this.tracing, dropped_spans: dropped, exporters };
    if (this.keeper) {
      const { sampler, samplerRatio, keepSlowMs } = this.config.otel;
      const ratio = sampler.endsWith('traceidratio') ? samplerRatio : null;
      out.sampler = ratio === null ? sampler : `${sampler} ${ratio}`;
      out.sampling = {
        sampler,
        ratio,
        always_stored: ['agent turns', 'errors', `local roots of ${keepSlowMs} ms or more`],
        keep_slow_ms: keepSlowMs,
        ...this.keeper.stats(),
      };
    }
    if (this.rollups) out.rollups = this.rollups.stats();
    return out;
  }

  /**
   * Stores the held traces that are complete, exports what is queued and
   * flushes the rollups; gives up after `timeoutMs` so a dead database cannot
   * hold a shutdown.
   */
  async flush(timeoutMs = 5_000): Promise<void> {
    this.keeper?.settleNow();
    await this.withTimeout(
      Promise.all([...this.processors.map((p) => p.forceFlush()), this.rollups?.flush()]),
      timeoutMs,
    );
  }

  /** Adds this process's counts to the rollups now (before a statistics read), within `timeoutMs`. */
  async flushRollups(timeoutMs = 2_000): Promise<void> {
    if (this.rollups) await this.withTimeout(this.rollups.flush(), timeoutMs);
  }

  /** Retention of spans and rollups; returns the rows deleted. */
  async prune(): Promise<number> {
    try {
      return await context.with(
        // The prune's own queries are housekeeping, not traffic worth tracing.
        suppressTracing(context.active()),
        async () =>
          (await pruneSpans(this.db, this.config.otel.retentionDays)) +
          (await this.rollupsRepo.prune(this.config.otel.retentionDays)),
      );
    } catch (err) {
      this.logger.warn({ err }, 'trace retention prune failed');
      return 0;
    }
  }

  async shutdown(): Promise<void> {
    clearInterval(this.pruneTimer);
    this.keeper?.shutdown();
    await Promise.allSettled([...this.processors.map((p) => p.shutdown()), this.rollups?.shutdown()]);
    await this.db.destroy();
  }

  private async withTimeout(work: Promise<unknown>, timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }

  private providerFor(role: Role): TracerProvider {
    const existing = this.providers.get(role);
    if (existing) return existing.provider;
    const resource = resourceFromAttributes({ 'service.name': this.serviceName(role) });
    const provider = new TracerProvider({
      resource,
      // One sampler per role, both from the same settings.
      sampler: this.sampler(),
      spanProcessors: [this.spanProcessor],
      // Prompts can be long; a span row stays bounded.
      spanLimits: { attributeValueLengthLimit: 16_384, attributeCountLimit: 128, eventCountLimit: 128 },
    });
    this.providers.set(role, { provider, resource });
    // Undefined only while the constructor builds the first role's provider.
    (this.router as RoleRoutingTracerProvider | undefined)?.add(resource, provider);
    return provider;
  }

  /** Every span is recorded (and counted); with tracing on, the trace state says whether it is stored. */
  private sampler(): Sampler {
    const { sampler, samplerRatio } = this.config.otel;
    return this.tracing ? new StorageSampler(buildSampler(sampler, samplerRatio)) : new RecordOnlySampler();
  }

  /** At most one line a minute: a dead collector must not flood the log. */
  private logExportError(exporter: string, err: unknown, lost: number): void {
    const now = Date.now();
    if (now - this.lastErrorLog < 60_000) return;
    this.lastErrorLog = now;
    this.logger.warn({ err, exporter, lost }, 'span export failed; spans lost');
  }
}

/** Workflow spans come from Temporal's sink in the OpenTelemetry JS 1.x shape; exporters read the 2.x one. */
function normalize(span: AnyReadableSpan): ReadableSpan {
  if (span.parentSpanContext || span.instrumentationScope) return span;
  const sc = span.spanContext();
  return Object.assign(Object.create(span), {
    ...span,
    spanContext: () => sc,
    parentSpanContext: span.parentSpanId
      ? { traceId: sc.traceId, spanId: span.parentSpanId, traceFlags: sc.traceFlags, isRemote: false }
      : undefined,
    instrumentationScope: span.instrumentationLibrary ?? { name: 'unknown' },
  }) as ReadableSpan;
}

let installed: Telemetry | undefined;
let disabled = false;

/**
 * Sets tracing and counting up for this process, once: context manager, W3C
 * propagation, pg/undici/http instrumentation, exporters, rollups. Call it
 * before creating database pools (the pg instrumentation patches the driver
 * when it is next required). A later call for another role (`npm start`) adds
 * that role's provider; the first call's settings win. OTEL_SDK_DISABLED turns
 * tracing off, not counting: spans are still made and counted (METRICS_ENABLED),
 * never stored, and no trace context is sent on. Returns undefined when both
 * are off.
 */
export function installTelemetry(role: Role, config: Config, logger: Logger): Telemetry | undefined {
  if (disabled) return undefined;
  if (installed) {
    installed.resource(role);
    return installed;
  }
  if ((config.otel.disabled && !config.metrics.enabled) || !config.databaseUrl) {
    disabled = true;
    return undefined;
  }
  const t = new Telemetry(config, logger, role);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  if (t.tracing) propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(t.globalProvider);
  registerInstrumentations({
    tracerProvider: t.globalProvider,
    instrumentations: [
      // Only queries inside a request or activity: pool housekeeping and the change feed are noise.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      // A suppressed request (a vendor call inside its model-call span, see
      // model-call-context.ts) is skipped before the instrumentation parses its
      // URL and headers, not merely given a non-recording span.
      new UndiciInstrumentation({
        requireParentforSpans: true,
        ignoreRequestHook: () => isTracingSuppressed(context.active()),
      }),
      // Outgoing http.request (Docker, Kubernetes clients); incoming requests get their span in api/middleware/tracing.ts.
      new HttpInstrumentation({
        disableIncomingRequestInstrumentation: true,
        requireParentforOutgoingSpans: true,
      }),
    ],
  });
  installed = t;
  return t;
}

/** The process's telemetry, if installed and enabled. */
export function currentTelemetry(): Telemetry | undefined {
  return installed;
}
