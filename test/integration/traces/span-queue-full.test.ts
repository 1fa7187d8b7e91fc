import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { noTemporal } from '../../helpers/services.js';

/**
 * A collector that accepts connections and never answers, with a queue of two
 * spans: requests must still be answered, and the lost spans counted where an
 * operator looks (readiness).
 */
describe.skipIf(noTemporal())('a full span queue', () => {
  let collector: Server;
  let api: TestApi;

  beforeAll(async () => {
    collector = createServer(() => undefined);
    collector.listen(0, '127.0.0.1');
    await new Promise((r) => collector.once('listening', r));
    api = await startTestApi({
      OTEL_SERVICE_NAME: `test-queue-${randomUUID()}`,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
      OTEL_BSP_MAX_QUEUE_SIZE: '2',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '1',
      OTEL_BSP_EXPORT_TIMEOUT: '120000',
    });
  });
  afterAll(async () => {
    await api?.close();
    collector?.closeAllConnections();
    collector?.close();
  });

  it('drops and counts spans instead of blocking requests', async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, () => api.request('GET', `/api/agent-server/projects/${randomUUID()}`)),
    );
    expect(results.map((r) => r.status)).toEqual(Array.from({ length: 40 }, () => 404));
    const ready = await api.request<{
      telemetry: { dropped_spans: number; exporters: Record<string, { dropped: number; queued: number }> };
    }>('GET', '/api/agent-server/health/ready');
    expect(ready.status).toBe(200);
    const { telemetry } = ready.body.data;
    // 40 requests made at least 80 spans (server span and query); the stuck exporter holds 1 and queues 2.
    expect(telemetry.exporters.otlp!.dropped).toBeGreaterThanOrEqual(77);
    expect(telemetry.exporters.otlp!.queued).toBe(2);
    expect(telemetry.dropped_spans).toBeGreaterThanOrEqual(telemetry.exporters.otlp!.dropped);
  });
});
