/**
 * METRICS_ENABLED=false: nothing is recorded and /metrics is not there (its
 * own file: metrics, like tracing, are set up once per process).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { metrics } from '../../core/telemetry/metrics.js';
import { startTestApi, type TestApi } from '../helpers/api.js';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ METRICS_ENABLED: 'false' });
});
afterAll(() => api.close());

it('GET /metrics is 404, like any path that is not there', async () => {
  await api.request('GET', '/api/agent-server/health');
  const res = await fetch(`${api.url}/metrics`);
  expect(res.status).toBe(404);
  expect(await res.text()).not.toContain('# TYPE');
  expect(metrics().enabled).toBe(false);
});

it('a later server in the same process cannot turn them back on', async () => {
  const other = await startTestApi({ METRICS_ENABLED: 'true' });
  try {
    expect((await fetch(`${other.url}/metrics`)).status).toBe(404);
  } finally {
    await other.close();
  }
});
