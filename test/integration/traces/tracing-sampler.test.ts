import { randomBytes, randomUUID } from 'node:crypto';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { databaseUrl } from '../../helpers/services.js';

// The ratio sampler's own verdict on an id: the oracle for which traces must be stored.
const half = new TraceIdRatioBasedSampler(0.5);
const keeps = (traceId: string) =>
  half.shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED;
const HIGH = 'fffffffe000000000000000000000001'; // dropped by a 0.5 ratio
const LOW = '0000000000000000000000000000000a'; // kept by it

describe('OTEL_TRACES_SAMPLER=parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG=0.5', () => {
  const service = `test-sampler-${randomUUID()}`;
  let api: TestApi;
  let db: Db;

  beforeAll(async () => {
    api = await startTestApi({
      OTEL_SERVICE_NAME: service,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.5',
    });
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await api?.close();
    await db?.destroy();
  });

  const stored = async (traceIds: string[]) => {
    await currentTelemetry()!.flush();
    const rows = await db('spans')
      .where({ service_name: service, kind: 'SERVER' })
      .whereIn('trace_id', traceIds)
      .select('trace_id');
    return new Set(rows.map((r: { trace_id: string }) => r.trace_id));
  };

  it('stores exactly the root traces the ratio keeps, and answers X-Trace-Id for all of them', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) {
      const res = await api.request('GET', '/api/agent-server/health');
      expect(res.status).toBe(200);
      ids.push(res.headers.get('x-trace-id')!);
    }
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(200);
    const expected = new Set(ids.filter(keeps));
    // 200 fair draws: 100 ± 7 expected; outside 50–150 the ratio would not be applied at all.
    expect(expected.size).toBeGreaterThan(50);
    expect(expected.size).toBeLessThan(150);
    expect(await stored(ids)).toEqual(expected);
    expect(currentTelemetry()!.stats()).toMatchObject({ sampler: 'parentbased_traceidratio 0.5' });
  });

  it("follows an incoming traceparent's sampled flag whatever the ratio would say", async () => {
    const sampled = await api.request('GET', '/api/agent-server/health', undefined, {
      traceparent: `00-${HIGH}-${randomBytes(8).toString('hex')}-01`,
    });
    const unsampled = await api.request('GET', '/api/agent-server/health', undefined, {
      traceparent: `00-${LOW}-${randomBytes(8).toString('hex')}-00`,
    });
    expect(sampled.headers.get('x-trace-id')).toBe(HIGH);
    expect(unsampled.headers.get('x-trace-id')).toBe(LOW);
    const found = await stored([HIGH, LOW]);
    expect(found.has(HIGH)).toBe(true);
    expect(found.has(LOW)).toBe(false);
    await db('spans').where({ service_name: service }).whereIn('trace_id', [HIGH, LOW]).delete();
  });
});
