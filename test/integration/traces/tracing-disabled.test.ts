import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { databaseUrl } from '../../helpers/services.js';

describe('OTEL_SDK_DISABLED=true', () => {
  const service = `test-untraced-${randomUUID()}`;
  let api: TestApi;
  let db: Db;

  beforeAll(async () => {
    api = await startTestApi({ OTEL_SDK_DISABLED: 'true', OTEL_SERVICE_NAME: service });
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await api?.close();
    await db?.destroy();
  });

  it('stores no span but still answers X-Trace-Id, continuing an incoming traceparent', async () => {
    // Tracing off, counting on (METRICS_ENABLED defaults to true).
    expect(currentTelemetry()?.tracing).toBe(false);
    const fresh = await api.request('GET', `/api/agent-server/projects/${randomUUID()}`);
    expect(fresh.headers.get('x-trace-id')).toMatch(/^[0-9a-f]{32}$/);
    // A fresh id per request, never the same one twice.
    const more = await Promise.all(
      Array.from({ length: 20 }, () => api.request('GET', '/api/agent-server/health')),
    );
    const ids = new Set([fresh, ...more].map((r) => r.headers.get('x-trace-id')));
    expect(ids.size).toBe(21);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    const traceId = randomBytes(16).toString('hex');
    const continued = await api.request('GET', '/api/agent-server/health', undefined, {
      traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
    });
    expect(continued.headers.get('x-trace-id')).toBe(traceId);
    await new Promise((r) => setTimeout(r, 1_500)); // longer than the default export delay
    const stored = await db('spans')
      .whereIn('trace_id', [traceId, fresh.headers.get('x-trace-id')!])
      .count<Array<{ count: string }>>('* as count');
    expect(Number(stored[0]!.count)).toBe(0);
    const none = await db('spans')
      .where({ service_name: service })
      .count<Array<{ count: string }>>('* as count');
    expect(Number(none[0]!.count)).toBe(0);
    const ready = await api.request<{ telemetry: Record<string, unknown> }>(
      'GET',
      '/api/agent-server/health/ready',
    );
    if (ready.status === 200) {
      expect(ready.body.data.telemetry).toMatchObject({ enabled: false, dropped_spans: 0, exporters: {} });
      expect(ready.body.data.telemetry.sampling).toBeUndefined();
    }
  });

  it('still counts every request in the statistics (OTEL_SDK_DISABLED turns off tracing only)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await api.request('GET', `/api/agent-server/projects/${randomUUID()}`)).status);
    expect(statuses).toEqual([404, 404, 404, 404]);
    const res = await api.request<Array<{ span_name: string; call_count: number; error_count: number }>>(
      'GET',
      `/api/agent-server/traces/stats/endpoints?service_name=${service}&span_kind=SERVER`,
    );
    expect(res.body.data.find((r) => r.span_name === 'GET /api/agent-server/projects/{id}')).toMatchObject({
      call_count: 5, // the four above and the one of the first test
      error_count: 0,
    });
  });
});
