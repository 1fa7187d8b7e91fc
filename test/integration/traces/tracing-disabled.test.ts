import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../api/db/knex.js';
import { currentTelemetry } from '../../../api/telemetry/telemetry.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { databaseUrl } from '../../helpers/services.js';

describe('OTEL_SDK_DISABLED=true', () => {
  let api: TestApi;
  let db: Db;

  beforeAll(async () => {
    api = await startTestApi({ OTEL_SDK_DISABLED: 'true' });
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await api?.close();
    await db?.destroy();
  });

  it('records nothing but still answers X-Trace-Id, continuing an incoming traceparent', async () => {
    expect(currentTelemetry()).toBeUndefined();
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
    const ready = await api.request<{ telemetry: unknown }>('GET', '/api/agent-server/health/ready');
    if (ready.status === 200) expect(ready.body.data.telemetry).toEqual({ enabled: false });
  });
});
