import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../core/config.js';

describe('tracing configuration', () => {
  it('has defaults', () => {
    expect(loadConfig({}).otel).toEqual({
      disabled: false,
      serviceName: undefined,
      otlpEndpoint: undefined,
      recordContent: false,
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.1,
      keepSlowMs: 10_000,
      rollupIntervalMs: 5_000,
      retentionDays: 7,
      pruneIntervalMs: 3_600_000,
      maxQueueSize: 2048,
      maxExportBatchSize: 512,
      scheduleDelayMs: 1_000,
      exportTimeoutMs: 30_000,
    });
  });

  it('reads overrides and clamps a batch larger than the queue', () => {
    const otel = loadConfig({
      OTEL_SDK_DISABLED: 'true',
      OTEL_SERVICE_NAME: 'edge-api',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_RECORD_CONTENT: '1',
      TRACE_RETENTION_DAYS: '30',
      OTEL_BSP_MAX_QUEUE_SIZE: '10',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '50',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      TRACE_KEEP_SLOW_MS: '2500',
      TRACE_ROLLUP_INTERVAL_MS: '1000',
    }).otel;
    expect(otel).toMatchObject({
      disabled: true,
      serviceName: 'edge-api',
      otlpEndpoint: 'http://127.0.0.1:4318',
      recordContent: true,
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.25,
      keepSlowMs: 2_500,
      rollupIntervalMs: 1_000,
      retentionDays: 30,
      maxQueueSize: 10,
      maxExportBatchSize: 10,
    });
  });

  it('refuses bad values with one line naming the variable', () => {
    for (const [key, value] of [
      ['OTEL_EXPORTER_OTLP_ENDPOINT', 'grpc://collector'],
      ['TRACE_RETENTION_DAYS', '-1'],
      ['OTEL_BSP_MAX_QUEUE_SIZE', '0'],
      ['OTEL_RECORD_CONTENT', 'perhaps'],
      ['OTEL_TRACES_SAMPLER', 'jaeger_remote'],
      ['OTEL_TRACES_SAMPLER', 'ALWAYS_ON'],
      ['OTEL_TRACES_SAMPLER_ARG', '1.5'],
      ['OTEL_TRACES_SAMPLER_ARG', '-0.1'],
      ['OTEL_TRACES_SAMPLER_ARG', 'half'],
      ['TRACE_KEEP_SLOW_MS', '0'],
      ['TRACE_KEEP_SLOW_MS', 'slow'],
      ['TRACE_ROLLUP_INTERVAL_MS', '10'],
    ] as const) {
      expect(() => loadConfig({ [key]: value }), key).toThrow(ConfigError);
      expect(() => loadConfig({ [key]: value })).toThrow(key);
    }
  });
});
