import { afterEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { freePort } from '../helpers/ports.js';
import { noTemporal } from '../helpers/services.js';

interface Check {
  ok: boolean;
  error?: string;
}

describe('health and readiness', () => {
  let api: TestApi | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it.skipIf(noTemporal())('is ready when Postgres and Temporal answer', async () => {
    api = await startTestApi();
    const live = await api.request('GET', '/api/agent-server/health');
    expect(live.body).toMatchObject({ error: false, status: 200, data: { status: 'ok' } });
    const ready = await api.request<{ checks: Record<string, Check> }>(
      'GET',
      '/api/agent-server/health/ready',
    );
    expect(ready.status).toBe(200);
    expect(ready.body.data.checks.postgres?.ok).toBe(true);
    expect(ready.body.data.checks.temporal?.ok).toBe(true);
  });

  it('reports Postgres down with a 503 envelope naming it, while liveness stays up', async () => {
    const closed = await freePort();
    api = await startTestApi({ DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/nothing` });
    const ready = await api.request('GET', '/api/agent-server/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ error: true, message: 'Service unavailable', status: 503, data: {} });
    const details = ready.body.errorDetails as { down: string[]; checks: Record<string, Check> };
    expect(details.down).toContain('postgres');
    expect(details.checks.postgres?.ok).toBe(false);
    expect((await api.request('GET', '/api/agent-server/health')).status).toBe(200);
  });

  it('reports Temporal down with a 503 naming it', async () => {
    api = await startTestApi({ TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` });
    const ready = await api.request('GET', '/api/agent-server/health/ready');
    expect(ready.status).toBe(503);
    const details = ready.body.errorDetails as { down: string[] };
    expect(details.down).toEqual(['temporal']);
  });
});
