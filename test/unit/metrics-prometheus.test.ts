/**
 * The Prometheus rendering (names with units, escaping), the scrape token
 * check, the metrics variables, and the strict text-format parser the
 * integration tests rely on (it must refuse what Prometheus refuses).
 */
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';
import { GatewayMetrics } from '../../core/telemetry/metrics/gateway.js';
import { GenAiMetrics } from '../../core/telemetry/metrics/genai.js';
import { HttpServerMetrics } from '../../core/telemetry/metrics/http-server.js';
import { PrometheusText, scrapeAllowed } from '../../core/telemetry/metrics/prometheus.js';
import { parsePrometheusText, sumOf } from '../helpers/prometheus-text.js';

function meter() {
  const reader = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [reader] });
  const text = new PrometheusText();
  return {
    meter: provider.getMeter('test'),
    async scrape() {
      const { resourceMetrics } = await reader.collect();
      return text.render(resourceMetrics);
    },
  };
}

describe('PrometheusText', () => {
  it('names metrics the Prometheus way: base unit suffix, _total on counters, annotations dropped', async () => {
    const m = meter();
    const genai = new GenAiMetrics(m.meter);
    const gateway = new GatewayMetrics(m.meter, genai);
    const a = genai.attributes({ operation: 'chat', surface: 'openai', providerType: 'openai', model: 'm' });
    gateway.end(a, 200, 0.5, 0.002, { input_tokens: 10, output_tokens: 4 });
    gateway.end(a, 429, 0.1, 0.001, undefined);
    gateway.cost(a, 0.25);
    const text = await m.scrape();
    const families = parsePrometheusText(text);
    expect([...families.keys()].sort()).toEqual([
      'agent_server_gateway_cost_usd_total',
      'agent_server_gateway_errors_total',
      'agent_server_gateway_overhead_duration_seconds',
      'agent_server_gateway_requests_total',
      'gen_ai_client_operation_duration_seconds',
      'gen_ai_client_token_usage',
      'target_info',
    ]);
    expect(text).not.toContain('# UNIT');
    expect(text).not.toContain('otel_scope_name');
    expect(sumOf(families, 'agent_server_gateway_requests_total')).toBe(2);
    expect(sumOf(families, 'agent_server_gateway_errors_total', { error_type: '429' })).toBe(1);
    expect(sumOf(families, 'gen_ai_client_operation_duration_seconds_sum')).toBeCloseTo(0.6);
    expect(sumOf(families, 'gen_ai_client_token_usage_sum', { gen_ai_token_type: 'output' })).toBe(4);
    expect(sumOf(families, 'agent_server_gateway_cost_usd_total')).toBe(0.25);
  });

  it('escapes label values so that quotes, backslashes and newlines survive a strict parser', async () => {
    const m = meter();
    const http = new HttpServerMetrics(m.meter);
    const odd = '/a "quoted" \\ route\nwith a newline';
    http.record('GET', odd, 200, 0.01);
    http.record('_OTHER', undefined, 405, 0.01);
    const families = parsePrometheusText(await m.scrape());
    const count = 'http_server_request_duration_seconds_count';
    expect(sumOf(families, count, { http_route: odd })).toBe(1);
    expect(sumOf(families, count, { http_route: undefined, http_request_method: '_OTHER' })).toBe(1);
  });

  it('reuses one attribute object per combination (nothing allocated per request)', () => {
    const genai = new GenAiMetrics(meter().meter);
    const labels = { operation: 'chat', providerType: 'openai', model: 'm' };
    expect(genai.attributes(labels)).toBe(genai.attributes({ ...labels }));
    expect(genai.attributes(labels).withError('500')).toBe(genai.attributes(labels).withError('500'));
  });
});

describe('scrapeAllowed', () => {
  const token = 'a-long-admin-token-0123';
  it('is open when no token is configured', () => {
    expect(scrapeAllowed(undefined, { token: undefined })).toBe(true);
  });
  it('then wants exactly the bearer token', () => {
    const opts = { token };
    expect(scrapeAllowed(undefined, opts)).toBe(false);
    expect(scrapeAllowed(`Bearer ${token}x`, opts)).toBe(false);
    expect(scrapeAllowed(`Basic ${token}`, opts)).toBe(false);
    expect(scrapeAllowed(`Bearer ${token}`, opts)).toBe(true);
    expect(scrapeAllowed(`bearer  ${token} `, opts)).toBe(true);
  });
});

describe('metrics variables', () => {
  const admin = 'a'.repeat(16);
  const metricsToken = 'm'.repeat(16);
  it('default to on, open, without per-key labels and without a worker port', () => {
    expect(loadConfig({}).metrics).toEqual({
      enabled: true,
      token: undefined,
      perKey: false,
      workerPort: undefined,
    });
  });
  it('/metrics wants METRICS_TOKEN, else ADMIN_TOKEN, whenever one is set', () => {
    expect(loadConfig({ ADMIN_TOKEN: admin }).metrics.token).toBe(admin);
    expect(loadConfig({ METRICS_TOKEN: metricsToken }).metrics.token).toBe(metricsToken);
    expect(loadConfig({ ADMIN_TOKEN: admin, METRICS_TOKEN: metricsToken }).metrics.token).toBe(metricsToken);
    // METRICS_REQUIRE_TOKEN=false no longer opens it while a token is set.
    expect(loadConfig({ ADMIN_TOKEN: admin, METRICS_REQUIRE_TOKEN: 'false' }).metrics.token).toBe(admin);
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN/);
  });
  it('METRICS_REQUIRE_TOKEN needs ADMIN_TOKEN or METRICS_TOKEN', () => {
    expect(() => loadConfig({ METRICS_REQUIRE_TOKEN: 'true' })).toThrow(ConfigError);
    expect(loadConfig({ METRICS_REQUIRE_TOKEN: 'true', ADMIN_TOKEN: admin }).metrics.token).toBe(admin);
    expect(loadConfig({ METRICS_REQUIRE_TOKEN: 'true', METRICS_TOKEN: metricsToken }).metrics.token).toBe(
      metricsToken,
    );
  });
  it('WORKER_METRICS_PORT is a port', () => {
    expect(loadConfig({ WORKER_METRICS_PORT: '9464' }).metrics.workerPort).toBe(9464);
    expect(() => loadConfig({ WORKER_METRICS_PORT: '70000' })).toThrow(ConfigError);
  });
});

describe('the strict text-format parser', () => {
  const ok = '# HELP a_total A.\n# TYPE a_total counter\na_total{x="1"} 2\n';
  it('reads a well-formed family', () => {
    expect(parsePrometheusText(ok).get('a_total')).toMatchObject({
      help: 'A.',
      type: 'counter',
      samples: [{ name: 'a_total', labels: { x: '1' }, value: 2 }],
    });
  });
  it.each([
    ['no final newline', ok.trimEnd()],
    ['a family split in two', `${ok}# TYPE b gauge\nb 1\na_total{x="2"} 1\n`],
    ['TYPE after samples', 'c 1\n# TYPE c gauge\n'],
    ['a duplicate series', `${ok}a_total{x="1"} 3\n`],
    ['a bad escape', '# TYPE d gauge\nd{x="\\t"} 1\n'],
    ['an unquoted label', '# TYPE d gauge\nd{x=1} 1\n'],
    ['a bad metric name', '# TYPE 1d gauge\n1d 1\n'],
    ['a bad value', '# TYPE d gauge\nd one\n'],
    [
      'buckets that are not cumulative',
      '# TYPE h histogram\nh_bucket{le="1"} 3\nh_bucket{le="+Inf"} 2\nh_count 2\nh_sum 1\n',
    ],
    ['a histogram without +Inf', '# TYPE h histogram\nh_bucket{le="1"} 1\nh_count 1\nh_sum 1\n'],
  ])('refuses %s', (_, text) => {
    expect(() => parsePrometheusText(text)).toThrow();
  });
});
