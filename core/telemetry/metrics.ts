import { createNoopMeter, type Meter } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { GatewayMetrics } from './metrics/gateway.js';
import { GenAiMetrics } from './metrics/genai.js';
import { HttpServerMetrics } from './metrics/http-server.js';
import { PrometheusText } from './metrics/prometheus.js';
import { observeRuntime } from './metrics/runtime.js';
import { SandboxMetrics } from './metrics/sandbox.js';
import { SessionMetrics } from './metrics/session.js';
import { currentTelemetry, DEFAULT_SERVICE_NAMES, type Role } from './telemetry.js';

/**
 * Every instrument of the process, grouped by who records them. Recording
 * sites call `metrics().<group>.<method>`; with metrics off the groups are
 * built on a no-op meter, so nobody checks a flag.
 */
export interface Metrics {
  readonly enabled: boolean;
  readonly http: HttpServerMetrics;
  readonly genai: GenAiMetrics;
  readonly gateway: GatewayMetrics;
  readonly session: SessionMetrics;
  readonly sandbox: SandboxMetrics;
}

function buildMetrics(meter: Meter, enabled: boolean): Metrics {
  const genai = new GenAiMetrics(meter);
  return {
    enabled,
    http: new HttpServerMetrics(meter),
    genai,
    gateway: new GatewayMetrics(meter, genai),
    session: new SessionMetrics(meter),
    sandbox: new SandboxMetrics(meter),
  };
}

/**
 * The process's metrics: one MeterProvider whose only reader is the
 * Prometheus exporter, without its own HTTP server (`/metrics` is served by
 * the API's Koa app and the worker's metrics port). Counts are kept from the
 * start of the process; Prometheus scrapes each replica and adds them up.
 */
export class MetricsRegistry {
  readonly metrics: Metrics;
  private readonly provider: MeterProvider;
  private readonly reader: PrometheusExporter;
  private readonly text = new PrometheusText();
  private readonly stopRuntime: () => void;

  constructor(
    readonly serviceName: string,
    config: Config,
    private readonly logger: Logger | undefined,
  ) {
    this.reader = new PrometheusExporter({ preventServerStart: true });
    this.provider = new MeterProvider({
      resource: resourceFromAttributes({ 'service.name': serviceName }),
      readers: [this.reader],
    });
    const meter = this.provider.getMeter('agent-server');
    this.metrics = buildMetrics(meter, true);
    this.stopRuntime = observeRuntime(meter, () => currentTelemetry()?.stats(), config.otel.maxQueueSize);
  }

  /** Everything recorded so far, in the Prometheus text format. */
  async scrape(): Promise<string> {
    const { resourceMetrics, errors } = await this.reader.collect();
    if (errors.length) this.logger?.warn({ errors: errors.map(String) }, 'metrics collection errors');
    return this.text.render(resourceMetrics);
  }

  async shutdown(): Promise<void> {
    this.stopRuntime();
    await this.provider.shutdown();
  }
}

const NOOP_METRICS = buildMetrics(createNoopMeter(), false);
let installed: MetricsRegistry | undefined;
let disabled = false;

/**
 * Sets metrics up for this process, once, like tracing (first call wins;
 * METRICS_ENABLED=false makes every later call a no-op too). The meter
 * provider is not registered globally: the instrumentations installed for
 * tracing would otherwise add metrics with URL-shaped labels of their own.
 * OTEL_SDK_DISABLED turns tracing off, not metrics.
 */
export function installMetrics(role: Role, config: Config, logger?: Logger): MetricsRegistry | undefined {
  if (installed || disabled) return installed;
  if (!config.metrics.enabled) {
    disabled = true;
    return undefined;
  }
  installed = new MetricsRegistry(config.otel.serviceName ?? DEFAULT_SERVICE_NAMES[role], config, logger);
  return installed;
}

/** The process's instruments (no-ops until installed, and when disabled). */
export function metrics(): Metrics {
  return installed?.metrics ?? NOOP_METRICS;
}

/** The installed registry, for the `/metrics` endpoints. */
export function metricsRegistry(): MetricsRegistry | undefined {
  return installed;
}
