/**
 * The API's request spans: a request no route matched still has a name that
 * says what it was, the console's static files are one route, and the
 * console's own API calls (marked `x-agent-server-client: console`) stay out
 * of the trace list and the statistics unless asked for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { databaseUrl } from '../../helpers/services.js';

const SERVICE = 'test-request-spans';
let api: TestApi;

beforeAll(async () => {
  api = await startTestApi({
    DATABASE_URL: databaseUrl(),
    OTEL_SERVICE_NAME: SERVICE,
    OTEL_TRACES_SAMPLER: 'always_on',
  });
});
afterAll(() => api.close());

interface Row {
  name: string;
  parent_span_id: string | null;
  attributes: Record<string, unknown>;
}

async function spansOf(traceId: string): Promise<Row[]> {
  await currentTelemetry()!.flush();
  return api.server.deps
    .db('spans')
    .where({ trace_id: traceId })
    .select<Row[]>('name', 'parent_span_id', 'attributes');
}

const rootOf = async (traceId: string) => (await spansOf(traceId)).find((s) => s.parent_span_id === null)!;

describe('request span names', () => {
  it('names a request no route matched `METHOD (unrouted)`, without a route', async () => {
    const res = await api.request('GET', '/api/agent-server/no-such-thing');
    expect(res.status).toBe(404);
    const root = await rootOf(res.headers.get('x-trace-id')!);
    expect(root.name).toBe('GET (unrouted)');
    expect(root.attributes['http.route']).toBeUndefined();
    expect(root.attributes['http.response.status_code']).toBe(404);
  });

  it("names the console's pages and files `GET /console/*`", async () => {
    for (const path of ['/console/', '/console/traces/abc', '/console/assets/missing.js']) {
      const res = await fetch(`${api.url}${path}`);
      await res.arrayBuffer();
      const root = await rootOf(res.headers.get('x-trace-id')!);
      expect({
        path,
        name: root.name,
        route: root.attributes['http.route'],
        client: root.attributes['agent_server.client'],
      }).toEqual({
        path,
        name: 'GET /console/*',
        route: '/console/*',
        // The console's own traffic, left out of the trace list and statistics like its API calls.
        client: 'console',
      });
    }
  });
});

describe("the console's own requests", () => {
  const LIST = 'GET /api/agent-server/projects';
  const console = { 'x-agent-server-client': 'console' };

  it('are recorded as such, with what ran inside them', async () => {
    const res = await api.request('GET', '/api/agent-server/projects', undefined, console);
    const spans = await spansOf(res.headers.get('x-trace-id')!);
    expect(spans.length).toBeGreaterThan(1);
    for (const s of spans)
      expect({ name: s.name, client: s.attributes['agent_server.client'] }).toEqual({
        name: s.name,
        client: 'console',
      });
  });

  it('are left out of the trace list and the statistics unless include_console=true', async () => {
    const mine = await api.request('GET', '/api/agent-server/projects', undefined, console);
    await api.request('GET', '/api/agent-server/projects', undefined, console);
    const theirs = await api.request('GET', '/api/agent-server/projects');
    await currentTelemetry()!.flush();
    const listed = async (extra: string) =>
      (
        await api.request<Array<{ trace_id: string }>>(
          'GET',
          `/api/agent-server/traces?service_name=${SERVICE}&span_name=${encodeURIComponent(LIST)}&limit=1000${extra}`,
        )
      ).body.data.map((t) => t.trace_id);
    const byDefault = await listed('');
    expect(byDefault).toContain(theirs.headers.get('x-trace-id'));
    expect(byDefault).not.toContain(mine.headers.get('x-trace-id'));
    expect(await listed('&include_console=true')).toContain(mine.headers.get('x-trace-id'));

    const calls = async (extra: string) =>
      (
        await api.request<Array<{ span_name: string; call_count: number }>>(
          'GET',
          `/api/agent-server/traces/stats/endpoints?service_name=${SERVICE}&span_kind=SERVER${extra}`,
        )
      ).body.data.find((r) => r.span_name === LIST)?.call_count ?? 0;
    const without = await calls('');
    const withConsole = await calls('&include_console=true');
    // This file's console calls: one in the test above, two here.
    expect(withConsole - without).toBe(3);
    expect(without).toBeGreaterThanOrEqual(1);
  });
});
