import { createHash, timingSafeEqual } from 'node:crypto';
import { PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { DataPointType, type MetricData, type ResourceMetrics } from '@opentelemetry/sdk-metrics';

/** The Prometheus text exposition format, version 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * OpenTelemetry units as Prometheus name suffixes (the OpenTelemetry →
 * Prometheus compatibility rules): base units spelled out, annotations such
 * as `{request}` dropped, and `1` only for gauges (`_ratio`).
 */
const UNIT_SUFFIX: Record<string, string> = {
  s: 'seconds',
  ms: 'milliseconds',
  By: 'bytes',
  USD: 'usd',
};

function unitSuffix(metric: MetricData): string | undefined {
  const unit = metric.descriptor.unit;
  if (unit === '1') return metric.dataPointType === DataPointType.GAUGE ? 'ratio' : undefined;
  return UNIT_SUFFIX[unit];
}

/**
 * Serialises collected metrics: `http.server.request.duration` (unit `s`)
 * becomes `http_server_request_duration_seconds`, a counter gains `_total`
 * (the exporter's serializer does that and the escaping). The unit is in the
 * name, so the `# UNIT` comment lines are left out; so are the scope labels
 * (one scope: they would only repeat themselves on every series).
 */
export class PrometheusText {
  private readonly serializer = new PrometheusSerializer(undefined, false, undefined, false, true);

  render(resourceMetrics: ResourceMetrics): string {
    const scopeMetrics = resourceMetrics.scopeMetrics.map((scope) => ({
      ...scope,
      metrics: scope.metrics.map((metric) => {
        const suffix = unitSuffix(metric);
        const name = suffix ? `${metric.descriptor.name}_${suffix}` : metric.descriptor.name;
        // Copies: the descriptor belongs to the SDK's storage.
        return { ...metric, descriptor: { ...metric.descriptor, name, unit: '' } };
      }),
    }));
    return this.serializer.serialize({ ...resourceMetrics, scopeMetrics });
  }
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Whether a scrape may read the metrics: always when no token is configured,
 * else only with `Authorization: Bearer <token>` (compared in constant time).
 * The token is METRICS_TOKEN, or ADMIN_TOKEN without it (core/config.ts).
 */
export function scrapeAllowed(
  authorization: string | undefined,
  opts: { token: string | undefined },
): boolean {
  if (opts.token === undefined) return true;
  const match = /^Bearer\s+(.+)$/i.exec(authorization ?? '');
  return match !== null && timingSafeEqual(digest(match[1]!.trim()), digest(opts.token));
}
