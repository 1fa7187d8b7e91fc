/**
 * Span storage sampled at 0.1, statistics exact: the rollups count every
 * request, stored or not, while the spans table holds the traces the ratio
 * keeps plus every failed one.
 */
import { randomUUID } from 'node:crypto';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { databaseUrl } from '../../helpers/services.js';

// The ratio sampler's own verdict on an id: which ordinary traces must be stored.
const tenth = new TraceIdRatioBasedSampler(0.1);
const ratioKeeps = (traceId: string) =>
  tenth.shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED;

describe('OTEL_TRACES_SAMPLER=parentbased_traceidratio at 0.1: statistics exact, storage sampled', () => {
  const service = `test-sampled-${randomUUID()}`;
  let api: TestApi;
  let db: Db;

  beforeAll(async () => {
    api = await startTestApi({
      OTEL_SERVICE_NAME: service,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
      // Temporal unreachable: readiness answers 503, a server error.
      TEMPORAL_ADDRESS: '127.0.0.1:1',
    });
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await api?.close();
    await db?.destroy();
  });

  it('/stats/endpoints shows exactly the N requests made and their errors; spans hold the sampled and the failed', async () => {
    const ok: string[] = [];
    const notFound: string[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await api.request('GET', '/api/agent-server/health');
      expect(res.status).toBe(200);
      ok.push(res.headers.get('x-trace-id')!);
    }
    for (let i = 0; i < 40; i++) {
      const res = await api.request('GET', `/api/agent-server/projects/${randomUUID()}`);
      expect(res.status).toBe(404); // the caller's mistake, not an error
      notFound.push(res.headers.get('x-trace-id')!);
    }
    const failed = await Promise.all(
      Array.from({ length: 4 }, () => api.request('GET', '/api/agent-server/health/ready')),
    );
    expect(failed.map((r) => r.status)).toEqual([503, 503, 503, 503]);
    const failedIds = failed.map((r) => r.headers.get('x-trace-id')!);

    const res = await api.request<Array<{ span_name: string; call_count: number; error_count: number }>>(
      'GET',
      `/api/agent-server/traces/stats/endpoints?service_name=${service}&span_kind=SERVER`,
    );
    const byName = Object.fromEntries(res.body.data.map((r) => [r.span_name, r]));
    expect(byName['GET /api/agent-server/health']).toMatchObject({ call_count: 60, error_count: 0 });
    expect(byName['GET /api/agent-server/projects/{id}']).toMatchObject({ call_count: 40, error_count: 0 });
    expect(byName['GET /api/agent-server/health/ready']).toMatchObject({ call_count: 4, error_count: 4 });
    const services = await api.request<
      Array<{ service_name: string; call_count: number; error_count: number }>
    >('GET', '/api/agent-server/traces/stats/services');
    const mine = services.body.data.find((r) => r.service_name === service)!;
    // Entry spans: the 104 requests (the first stats request may be counted too).
    expect(mine.call_count).toBeGreaterThanOrEqual(104);
    expect(mine.call_count).toBeLessThanOrEqual(105);
    expect(mine.error_count).toBe(4);

    await currentTelemetry()!.flush();
    const stored = new Set(
      await db('spans')
        .where({ service_name: service, kind: 'SERVER' })
        .whereIn('trace_id', [...ok, ...notFound, ...failedIds])
        .pluck('trace_id'),
    );
    const ordinary = [...ok, ...notFound];
    const expected = ordinary.filter(ratioKeeps);
    // 100 draws at 0.1: 10 ± 3 expected; well below 100 stored either way.
    expect(expected.length).toBeLessThan(30);
    expect(new Set(ordinary.filter((id) => stored.has(id)))).toEqual(new Set(expected));
    // Every failed request's trace is stored, whatever the ratio said.
    for (const id of failedIds) expect(stored.has(id), id).toBe(true);
    const sampling = currentTelemetry()!.stats().sampling!;
    expect(sampling).toMatchObject({ sampler: 'parentbased_traceidratio', ratio: 0.1 });
    expect(sampling.kept_for_error).toBe(failedIds.filter((id) => !ratioKeeps(id)).length);
    expect(sampling.dropped_traces).toBeGreaterThanOrEqual(ordinary.length - expected.length);
  });
});
