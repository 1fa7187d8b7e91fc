import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { databaseUrl } from '../../helpers/services.js';

interface Row {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: string;
  service_name: string;
  status_code: string;
  attributes: Record<string, unknown>;
}

/** Spans of one trace, once the exporter has written them. */
async function spansOf(db: Db, traceId: string): Promise<Row[]> {
  await currentTelemetry()!.flush();
  return db('spans').where({ trace_id: traceId }).orderBy('start_time');
}

describe('API server spans', () => {
  // A service name of our own: other test files write spans to the same table.
  const service = `test-tracing-${randomUUID()}`;
  let api: TestApi;
  let down: TestApi;
  let db: Db;

  beforeAll(async () => {
    api = await startTestApi({ OTEL_SERVICE_NAME: service });
    // Same process, same telemetry; Temporal unreachable so readiness answers 503.
    down = await startTestApi({ TEMPORAL_ADDRESS: '127.0.0.1:1' });
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await api?.close();
    await down?.close();
    await db?.destroy();
  });

  it('names the span by route template, records HTTP attributes and a pg child span, and answers X-Trace-Id', async () => {
    const id = randomUUID();
    const res = await api.request('GET', `/api/agent-server/projects/${id}`);
    expect(res.status).toBe(404);
    const traceId = res.headers.get('x-trace-id');
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const spans = await spansOf(db, traceId!);
    const server = spans.find((s) => s.kind === 'SERVER')!;
    expect(server.name).toBe('GET /api/agent-server/projects/{id}');
    expect(server.service_name).toBe(service);
    expect(server.parent_span_id).toBeNull();
    expect(server.status_code).toBe('UNSET');
    expect(server.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/api/agent-server/projects/{id}',
      'http.response.status_code': 404,
      'url.path': `/api/agent-server/projects/${id}`,
    });
    const query = spans.find(
      (s) => s.attributes['db.system.name'] === 'postgresql' || s.attributes['db.system'] === 'postgresql',
    );
    expect(query, JSON.stringify(spans.map((s) => s.name))).toBeDefined();
    expect(query!.parent_span_id).toBe(server.span_id);
    expect(query!.service_name).toBe(service);
  });

  it('continues an incoming W3C traceparent', async () => {
    const traceId = randomBytes(16).toString('hex');
    const parentId = randomBytes(8).toString('hex');
    const res = await api.request('GET', '/api/agent-server/health', undefined, {
      traceparent: `00-${traceId}-${parentId}-01`,
    });
    expect(res.headers.get('x-trace-id')).toBe(traceId);
    const [server] = await spansOf(db, traceId);
    expect(server).toMatchObject({ parent_span_id: parentId, name: 'GET /api/agent-server/health' });
  });

  it('gives unmatched routes a stable name and marks 5xx as errors', async () => {
    const unknown = await api.request('GET', `/api/agent-server/no-such-thing/${randomUUID()}`);
    expect(unknown.status).toBe(404);
    const [a] = await spansOf(db, unknown.headers.get('x-trace-id')!);
    expect(a).toMatchObject({ name: 'GET (unrouted)', status_code: 'UNSET' });

    const ready = await down.request('GET', '/api/agent-server/health/ready');
    expect(ready.status).toBe(503);
    const [b] = await spansOf(db, ready.headers.get('x-trace-id')!);
    expect(b).toMatchObject({ name: 'GET /api/agent-server/health/ready', status_code: 'ERROR' });
    expect(b!.attributes['error.type']).toBe('503');
  });

  it('shows the exporter counters in readiness', async () => {
    const res = await api.request<{ telemetry: { enabled: boolean; dropped_spans: number } }>(
      'GET',
      '/api/agent-server/health/ready',
    );
    expect(res.body.data.telemetry).toMatchObject({ enabled: true, dropped_spans: 0 });
  });
});
