import { randomBytes, randomUUID } from 'node:crypto';
import { SpanKind } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import { TraceRollupsRepository } from '../../../core/repositories/trace-rollups.repository.js';
import { pruneSpans } from '../../../core/telemetry/postgres-exporter.js';
import { PERCENTILE_RELATIVE_ERROR } from '../../../core/telemetry/rollup-histogram.js';
import { TraceRollups } from '../../../core/telemetry/rollups.js';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { fakeSpan, type FakeSpanInit } from '../../helpers/fake-span.js';
import { databaseUrl } from '../../helpers/services.js';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

interface Seed {
  service: string;
  name: string;
  durationMs: number;
  error?: boolean;
  kind?: string;
  traceId?: string;
  spanId?: string;
  parent?: string | null;
  startsAgoMs?: number;
  attributes?: Record<string, unknown>;
}

async function seed(db: Db, spans: Seed[]): Promise<void> {
  await db('spans').insert(
    spans.map((s) => {
      const start = new Date(Date.now() - (s.startsAgoMs ?? 60_000));
      return {
        trace_id: s.traceId ?? hex(16),
        span_id: s.spanId ?? hex(8),
        parent_span_id: s.parent ?? null,
        name: s.name,
        kind: s.kind ?? 'SERVER',
        service_name: s.service,
        start_time: start,
        end_time: new Date(start.getTime() + s.durationMs),
        duration_ms: s.durationMs,
        status_code: s.error ? 'ERROR' : 'UNSET',
        attributes: JSON.stringify(s.attributes ?? {}),
        project_id: (s.attributes?.['agent_server.project.id'] as string | undefined) ?? null,
      };
    }),
  );
}

/** Counts spans the way a process does (every span it ends) and adds them to the rollups. */
async function count(db: Db, spans: FakeSpanInit[]): Promise<void> {
  const rollups = new TraceRollups(new TraceRollupsRepository(db), { intervalMs: 60_000 });
  for (const s of spans) rollups.record(fakeSpan(s));
  await rollups.shutdown();
  expect(rollups.stats()).toMatchObject({ pending_keys: 0, failed_flushes: 0 });
}

/** Within the documented relative error of percentile_cont's exact value. */
const near = (exact: number) => ({
  asymmetricMatch: (v: unknown) =>
    typeof v === 'number' && Math.abs(v - exact) <= exact * PERCENTILE_RELATIVE_ERROR + 0.001,
  toString: () => `${exact} ± ${(PERCENTILE_RELATIVE_ERROR * 100).toFixed(2)} %`,
});

interface StatRow {
  service_name: string;
  span_name: string;
  call_count: number;
  error_count: number;
  error_rate: number;
  avg_ms: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  max_ms: number;
}

describe('traces endpoints', () => {
  const service = `test-traces-api-${randomUUID()}`;
  let api: TestApi;
  let down: TestApi;
  let db: Db;

  beforeAll(async () => {
    api = await startTestApi({ OTEL_SERVICE_NAME: service });
    down = await startTestApi({ TEMPORAL_ADDRESS: '127.0.0.1:1' });
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await api?.close();
    await down?.close();
    await db?.destroy();
  });

  it('counts exactly and reads percentiles from the merged histogram, near percentile_cont', async () => {
    const svc = `seed-${randomUUID()}`;
    await count(db, [
      ...[10, 20, 30, 40, 50, 60, 70, 80, 90, 100].map((d, i) => ({
        service: svc,
        name: 'GET /ten',
        durationMs: d,
        error: i === 0,
      })),
      ...[100, 1, 4, 2, 3].map((d) => ({ service: svc, name: 'GET /five', durationMs: d })),
    ]);
    const res = await api.request<StatRow[]>(
      'GET',
      `/api/agent-server/traces/stats/endpoints?service_name=${svc}`,
    );
    expect(res.status).toBe(200);
    // percentile_cont by hand: rank = p * (n - 1); value = lower + fraction * (upper - lower).
    // Counts, errors, average and max are exact; percentiles within the histogram's error.
    expect(res.body.data).toEqual([
      {
        service_name: svc,
        span_name: 'GET /ten',
        call_count: 10,
        error_count: 1,
        error_rate: 0.1,
        avg_ms: 55,
        p50_ms: near(55), // rank 4.5: 50 + 0.5 * 10
        p95_ms: near(95.5), // rank 8.55: 90 + 0.55 * 10
        p99_ms: near(99.1), // rank 8.91: 90 + 0.91 * 10
        max_ms: 100,
      },
      {
        service_name: svc,
        span_name: 'GET /five',
        call_count: 5,
        error_count: 0,
        error_rate: 0,
        avg_ms: 22,
        p50_ms: near(3), // sorted 1 2 3 4 100, rank 2
        p95_ms: near(80.8), // rank 3.8: 4 + 0.8 * 96
        p99_ms: near(96.16), // rank 3.96: 4 + 0.96 * 96
        max_ms: 100,
      },
    ]);
    // Spans are not what is counted: the rollups are.
    expect(
      await db('spans').where({ service_name: svc }).count<Array<{ count: string }>>('* as count'),
    ).toEqual([{ count: 0 }]);
  });

  it('counts exactly the real requests made, with 5xx as errors and 4xx not', async () => {
    const project = await api.request<{ id: string }>('POST', '/api/agent-server/projects', {
      name: `traces-${randomUUID()}`,
    });
    expect(project.status).toBe(200);
    const statuses: number[] = [];
    for (const id of [project.body.data.id, randomUUID(), project.body.data.id, randomUUID()]) {
      statuses.push((await api.request('GET', `/api/agent-server/projects/${id}`)).status);
    }
    for (let i = 0; i < 3; i++)
      statuses.push((await down.request('GET', '/api/agent-server/health/ready')).status);
    expect(statuses).toEqual([200, 404, 200, 404, 503, 503, 503]);
    await currentTelemetry()!.flush();

    const res = await api.request<StatRow[]>(
      'GET',
      `/api/agent-server/traces/stats/endpoints?service_name=${service}&span_kind=SERVER`,
    );
    const byName = Object.fromEntries(res.body.data.map((r) => [r.span_name, r]));
    expect(byName['GET /api/agent-server/projects/{id}']).toMatchObject({
      service_name: service,
      call_count: 4,
      error_count: 0,
      error_rate: 0,
    });
    expect(byName['GET /api/agent-server/health/ready']).toMatchObject({
      call_count: 3,
      error_count: 3,
      error_rate: 1,
    });
    expect(byName['POST /api/agent-server/projects']).toMatchObject({ call_count: 1, error_count: 0 });
    // Ordered by call count.
    const counts = res.body.data.map((r) => r.call_count);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));

    const services = await api.request<
      Array<{ service_name: string; call_count: number; error_count: number }>
    >('GET', '/api/agent-server/traces/stats/services');
    const mine = services.body.data.find((r) => r.service_name === service)!;
    // Entry spans only (one per request); the stats request itself may already be counted.
    expect(mine.call_count).toBeGreaterThanOrEqual(8);
    expect(mine.call_count).toBeLessThanOrEqual(10);
    expect(mine.error_count).toBe(3);

    const errors = await api.request<
      Array<{ trace_id: string; root_span_name: string; error_count: number }>
    >('GET', `/api/agent-server/traces?service_name=${service}&has_errors=true`);
    expect(errors.body.data).toHaveLength(3);
    expect(errors.body.data.every((t) => t.root_span_name === 'GET /api/agent-server/health/ready')).toBe(
      true,
    );

    const byName2 = await api.request<Array<{ trace_id: string; span_count: number }>>(
      'GET',
      `/api/agent-server/traces?service_name=${service}&span_name=PROJECTS/%7Bid%7D&limit=2`,
    );
    expect(byName2.body.data).toHaveLength(2);

    const detail = await api.request<{
      spans: Array<{ span_id: string; kind: string; name: string }>;
      tree: Array<{ span_id: string; name: string; children: Array<{ name: string }> }>;
    }>('GET', `/api/agent-server/traces/${byName2.body.data[0]!.trace_id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.data.tree).toHaveLength(1);
    expect(detail.body.data.tree[0]!.name).toBe('GET /api/agent-server/projects/{id}');
    expect(detail.body.data.tree[0]!.children.length).toBeGreaterThan(0);
    expect(detail.body.data.spans).toHaveLength(byName2.body.data[0]!.span_count);
  });

  it('lists traces with root, duration and counts, filtered by duration and project', async () => {
    const svc = `seed-${randomUUID()}`;
    const projectId = randomUUID();
    const t1 = hex(16);
    const root = hex(8);
    await seed(db, [
      { service: svc, name: 'root', durationMs: 120, traceId: t1, spanId: root },
      {
        service: svc,
        name: 'child',
        durationMs: 50,
        traceId: t1,
        parent: root,
        kind: 'INTERNAL',
        error: true,
        attributes: { 'agent_server.project.id': projectId },
      },
      { service: svc, name: 'quick', durationMs: 5 },
    ]);
    const list = await api.request<Array<Record<string, unknown>>>(
      'GET',
      `/api/agent-server/traces?service_name=${svc}`,
    );
    expect(list.body.data).toHaveLength(2);
    expect(list.body.data.find((t) => t.trace_id === t1)).toMatchObject({
      root_span_name: 'root',
      root_service_name: svc,
      duration_ms: 120,
      span_count: 2,
      error_count: 1,
    });
    const slow = await api.request<unknown[]>(
      'GET',
      `/api/agent-server/traces?service_name=${svc}&min_duration_ms=100`,
    );
    expect(slow.body.data).toHaveLength(1);
    const fast = await api.request<unknown[]>(
      'GET',
      `/api/agent-server/traces?service_name=${svc}&max_duration_ms=10`,
    );
    expect(fast.body.data).toHaveLength(1);
    const byProject = await api.request<Array<{ trace_id: string }>>(
      'GET',
      `/api/agent-server/traces?project_id=${projectId}`,
    );
    expect(byProject.body.data.map((t) => t.trace_id)).toEqual([t1]);
    const old = await api.request<unknown[]>(
      'GET',
      `/api/agent-server/traces?service_name=${svc}&end_time=${new Date(Date.now() - 3_600_000).toISOString()}`,
    );
    expect(old.body.data).toEqual([]);
  });

  it('answers 400 for bad filters and 404 for an unknown trace', async () => {
    for (const q of [
      'start_time=yesterday',
      'min_duration_ms=-1',
      'limit=1001',
      'limit=0',
      'has_errors=maybe',
      'project_id=nope',
      `start_time=${new Date().toISOString()}&end_time=${new Date(Date.now() - 1000).toISOString()}`,
      'min_duration_ms=10&max_duration_ms=5',
      'colour=blue',
    ]) {
      const res = await api.request('GET', `/api/agent-server/traces?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body).toMatchObject({ error: true, message: 'Invalid request', status: 400 });
    }
    for (const path of [
      'stats/endpoints?end_time=soon',
      'stats/services?start_time=x',
      'stats/models?project_id=1',
    ]) {
      expect((await api.request('GET', `/api/agent-server/traces/${path}`)).status, path).toBe(400);
    }
    expect((await api.request('GET', '/api/agent-server/traces/not-a-trace-id')).status).toBe(400);
    const missing = await api.request('GET', `/api/agent-server/traces/${hex(16)}`);
    expect(missing.status).toBe(404);
  });

  it('sums model calls per provider and model from GenAI spans, by project too', async () => {
    const model = `model-${randomUUID()}`;
    const projectId = randomUUID();
    const genai = (input: number, output: number, cost?: number) => ({
      'gen_ai.system': 'openai',
      'gen_ai.request.model': model,
      'gen_ai.usage.input_tokens': input,
      'gen_ai.usage.output_tokens': output,
      'agent_server.project.id': projectId,
      ...(cost === undefined ? {} : { 'gen_ai.usage.cost_usd': cost }),
    });
    await count(db, [
      {
        service: 'w',
        name: `chat ${model}`,
        kind: SpanKind.CLIENT,
        durationMs: 100,
        attributes: genai(10, 5, 0.001),
      },
      {
        service: 'w',
        name: `chat ${model}`,
        kind: SpanKind.CLIENT,
        durationMs: 300,
        attributes: genai(20, 7, 0.002),
      },
      {
        service: 'w',
        name: `chat ${model}`,
        kind: SpanKind.CLIENT,
        durationMs: 200,
        attributes: genai(0, 0),
        error: true,
      },
      // Not a model call: a server span that merely carries the attribute.
      { service: 'w', name: 'gateway', kind: SpanKind.SERVER, durationMs: 999, attributes: genai(1, 1) },
    ]);
    const res = await api.request<Array<Record<string, unknown>>>(
      'GET',
      '/api/agent-server/traces/stats/models',
    );
    const expected = {
      provider: 'openai',
      model,
      call_count: 3,
      error_count: 1,
      input_tokens: 30,
      output_tokens: 12,
      cost_usd: 0.003,
      p50_ms: near(200),
      p95_ms: near(290), // rank 1.9: 200 + 0.9 * 100
    };
    expect(res.body.data.find((r) => r.model === model)).toEqual(expected);
    const mine = await api.request<Array<Record<string, unknown>>>(
      'GET',
      `/api/agent-server/traces/stats/models?project_id=${projectId}`,
    );
    expect(mine.body.data).toEqual([expected]);
    const other = await api.request<unknown[]>(
      'GET',
      `/api/agent-server/traces/stats/models?project_id=${randomUUID()}`,
    );
    expect(other.body.data).toEqual([]);
  });

  it('prunes spans older than the retention', async () => {
    const svc = `seed-${randomUUID()}`;
    await seed(db, [
      { service: svc, name: 'old', durationMs: 1, startsAgoMs: 8 * 86_400_000 },
      { service: svc, name: 'recent', durationMs: 1, startsAgoMs: 6 * 86_400_000 },
    ]);
    expect(await pruneSpans(db, 7)).toBeGreaterThanOrEqual(1);
    const left = await db('spans').where({ service_name: svc }).pluck('name');
    expect(left).toEqual(['recent']);
  });
});
