import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { isTracingSuppressed, suppressTracing, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { TracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace';
import type { Config } from '../config.js';
import { createDb, type Db } from '../db/knex.js';
import type { Logger } from '../logger.js';
import { BoundedBatchProcessor, type BatchStats } from './batch-processor.js';
import { PostgresSpanExporter, pruneSpans } from './postgres-exporter.js';
import { RoleRoutingTracerProvider } from './role-router.js';
import { buildSampler } from './sampler.js';
import { spanToCopyLine, type AnyReadableSpan } from './span-row.js';

export type Role = 'api' | 'worker';

export const DEFAULT_SERVICE_NAMES: Record<Role, string> = {
  api: 'agent-server-api',
  worker: 'agent-server-worker',
};

export interface TelemetryStats {
  enabled: true;
  /** OTEL_TRACES_SAMPLER (and its ratio, for the ratio samplers). */
  sampler: string;
  /** Spans refused by a full queue, over all exporters, since start. */
  dropped_spans: number;
  exporters: Record<string, BatchStats>;
}

/**
 * Tracing for one process: one pipeline (bounded queues to Postgres and, when
 * configured, OTLP/HTTP) shared by one TracerProvider per role, so spans keep
 * their role's service name when api and worker run in the same process.
 */
export class Telemetry {
  private readonly providers = new Map<Role, { provider: TracerProvider; resource: Resource }>();
  private readonly router: RoleRoutingTracerProvider;
  private readonly processors: Array<BoundedBatchProcessor<ReadableSpan> | BoundedBatchProcessor<Buffer>> =
    [];
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
    this.db = createDb(config.databaseUrl!, { max: 2 });
    const batch = {
      maxQueueSize: otel.maxQueueSize,
      maxExportBatchSize: otel.maxExportBatchSize,
      scheduleDelayMs: otel.scheduleDelayMs,
      exportTimeoutMs: otel.exportTimeoutMs,
    };
    const onError = (name: string) => (err: unknown, lost: number) => this.logExportError(name, err, lost);
    this.processors.push(
      new BoundedBatchProcessor(
        'postgres',
        new PostgresSpanExporter(this.db),
        batch,
        onError('postgres'),
        spanToCopyLine,
      ),
    );
    if (otel.otlpEndpoint) {
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

  /** The processor every role's provider (and Temporal's workflow span sink) feeds. */
  get spanProcessor(): SpanProcessor {
    const processors = this.processors;
    return {
      onStart: () => undefined,
      onEnd: (span: ReadableSpan) => {
        for (const p of processors) p.onEnd(normalize(span));
      },
      forceFlush: async () => {
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
    const { sampler, samplerRatio } = this.config.otel;
    return {
      enabled: true,
      sampler: sampler.endsWith('traceidratio') ? `${sampler} ${samplerRatio}` : sampler,
      dropped_spans: dropped,
      exporters,
    };
  }

  /** Exports what is queued; gives up after `timeoutMs` so a dead database cannot hold a shutdown. */
  async flush(timeoutMs = 5_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.processors.map((p) => p.forceFlush())),
      new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(timer);
  }

  async prune(): Promise<number> {
    try {
      return await context.with(
        // The prune's own queries are housekeeping, not traffic worth tracing.
        suppressTracing(context.active()),
        () => pruneSpans(this.db, this.config.otel.retentionDays),
      );
    } catch (err) {
      this.logger.warn({ err }, 'trace retention prune failed');
      return 0;
    }
  }

  async shutdown(): Promise<void> {
    clearInterval(this.pruneTimer);
    await Promise.allSettled(this.processors.map((p) => p.shutdown()));
    await this.db.destroy();
  }

  private providerFor(role: Role): TracerProvider {
    const existing = this.providers.get(role);
    if (existing) return existing.provider;
    const resource = resourceFromAttributes({ 'service.name': this.serviceName(role) });
    const provider = new TracerProvider({
      resource,
      // One sampler per role, both from the same settings.
      sampler: buildSampler(this.config.otel.sampler, this.config.otel.samplerRatio),
      spanProcessors: [this.spanProcessor],
      // Prompts can be long; a span row stays bounded.
      spanLimits: { attributeValueLengthLimit: 16_384, attributeCountLimit: 128, eventCountLimit: 128 },
    });
    this.providers.set(role, { provider, resource });
    // Undefined only while the constructor builds the first role's provider.
    (this.router as RoleRoutingTracerProvider | undefined)?.add(resource, provider);
    return provider;
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
 * Sets tracing up for this process, once: context manager, W3C propagation,
 * pg/undici/http instrumentation, exporters. Call it before creating database
 * pools (the pg instrumentation patches the driver when it is next required).
 * A later call for another role (`npm start`) adds that role's provider; the
 * first call's settings win. Returns undefined when OTEL_SDK_DISABLED is set.
 */
export function installTelemetry(role: Role, config: Config, logger: Logger): Telemetry | undefined {
  if (disabled) return undefined;
  if (installed) {
    installed.resource(role);
    return installed;
  }
  if (config.otel.disabled || !config.databaseUrl) {
    disabled = true;
    return undefined;
  }
  const t = new Telemetry(config, logger, role);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
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
