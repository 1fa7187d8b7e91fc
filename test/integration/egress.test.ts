import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName } from '../helpers/factories.js';
import { createProvider, createVirtualKey } from '../helpers/factories/config.js';
import { noTemporal } from '../helpers/services.js';
import { startAuthenticatedMcpServer, type RunningMcp } from '../fixtures/mcp-servers.js';
import { startOpenAiVendor } from '../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../fixtures/vendors/scripted-server.js';
import { chatRequest, expectShape } from './gateway/raw-requests.js';
import { useSessionWorld } from './sessions/session-harness.js';

/*
 * The egress policy is process-wide (the api and the worker install their
 * configuration's at start), so each block runs its own API, one after the
 * other, and every expectation is about the API of its block.
 */

const MCP = '/api/agent-server/mcp-servers';

let vendor: ScriptedVendor;
beforeAll(async () => {
  vendor = await startOpenAiVendor();
});
afterAll(() => vendor.close());

/** A provider at `baseUrl` and a key for it; the answer to one chat call on the Anthropic surface. */
async function callThrough(api: TestApi, baseUrl: string, fields: Record<string, unknown> = {}) {
  const provider = await createProvider(api, { provider_type: 'openai', base_url: baseUrl, ...fields });
  const key = await createVirtualKey(api, { providers: [{ provider_id: provider.id, model_names: ['*'] }] });
  const res = await chatRequest(api, 'anthropic', `${provider.name}/m`, { secret: key.secret_key });
  const body: unknown = await res.json();
  return { status: res.status, body, message: res.status === 200 ? '' : expectShape('anthropic', body) };
}

async function inspect(api: TestApi, endpoint: string, transport: 'streamable_http' | 'sse') {
  const project = await createProject(api);
  const created = await api.request<{ id: string }>('POST', `${MCP}?project_id=${project.id}`, {
    name: uniqueName('mcp'),
    endpoint,
    transport,
  });
  if (created.status !== 200) throw new Error(`mcp server create failed: ${created.text}`);
  return api.request('POST', `${MCP}/${created.body.data.id}/inspect`);
}

describe('default policy (no EGRESS_* set)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api.close());

  it('a provider at the metadata address is a 403 in the vendor shape, refused before any connection', async () => {
    // Connect and call timeouts far beyond the test's: an attempt to connect would hang the test.
    const res = await callThrough(api, 'http://169.254.169.254/v1', {
      connect_timeout_ms: 300_000,
      timeout_ms: 300_000,
    });
    expect(res.status).toBe(403);
    expect(res.message).toBe(
      'egress to 169.254.169.254:80 is denied by the built-in EGRESS_DENY entry for link-local addresses and cloud metadata',
    );
  }, 10_000);

  it("a provider at the platform's own PostgreSQL port is refused; other loopback ports work", async () => {
    const pgPort = new URL(api.config.databaseUrl!).port || '5432';
    for (const host of ['127.0.0.1', 'localhost']) {
      const res = await callThrough(api, `http://${host}:${pgPort}/v1`);
      expect(res.status).toBe(403);
      expect(res.message).toBe(
        `egress to ${host}:${pgPort} is denied by the built-in EGRESS_DENY entry for the platform's PostgreSQL (DATABASE_URL)`,
      );
    }
    vendor.reset();
    expect((await callThrough(api, `${vendor.url}/v1`)).status).toBe(200);
    expect(vendor.received).toHaveLength(1);
  });

  it('an MCP server at the metadata address: inspect answers 403 saying why', async () => {
    const res = await inspect(api, 'http://169.254.169.254/mcp', 'streamable_http');
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: true, message: 'Forbidden', status: 403 });
    expect(res.body.errorDetails.reason).toBe(
      'egress to 169.254.169.254:80 is denied by the built-in EGRESS_DENY entry for link-local addresses and cloud metadata',
    );
  });
});

describe('EGRESS_DENY=127.0.0.0/8', () => {
  let api: TestApi;
  let mcp: RunningMcp;
  beforeAll(async () => {
    api = await startTestApi({ EGRESS_DENY: '127.0.0.0/8' });
    mcp = await startAuthenticatedMcpServer({ token: 'tok-egress-test', tenant: 'acme' });
  });
  afterAll(async () => {
    await api.close();
    await mcp.stop();
  });

  it('a provider at a loopback vendor is refused, not retried, and the vendor sees nothing', async () => {
    vendor.reset();
    const res = await callThrough(api, `${vendor.url}/v1`);
    expect(res.status).toBe(403);
    expect(res.message).toBe(`egress to ${new URL(vendor.url).host} is denied by EGRESS_DENY`);
    expect(vendor.received).toHaveLength(0);
  });

  it('a name that resolves into the denied range is refused (the check is after DNS)', async () => {
    vendor.reset();
    const port = new URL(vendor.url).port;
    const res = await callThrough(api, `http://localhost:${port}/v1`);
    expect(res.status).toBe(403);
    expect(res.message).toBe(`egress to localhost:${port} is denied by EGRESS_DENY`);
    expect(vendor.received).toHaveLength(0);
  });

  it('MCP inspect over Streamable HTTP and SSE answers 403 naming the endpoint', async () => {
    const streamable = await inspect(api, mcp.url, 'streamable_http');
    expect(streamable.status).toBe(403);
    expect(streamable.body.errorDetails.reason).toBe(
      `egress to ${new URL(mcp.url).host} is denied by EGRESS_DENY`,
    );
    const port = new URL(mcp.url).port;
    const sse = await inspect(api, `http://localhost:${port}/sse`, 'sse');
    expect(sse.status).toBe(403);
    expect(sse.body.errorDetails.reason).toBe(`egress to localhost:${port} is denied by EGRESS_DENY`);
  });
});

describe('EGRESS_ALLOW=example.invalid', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ EGRESS_ALLOW: 'example.invalid' });
  });
  afterAll(() => api.close());

  it('a destination outside the allow list is refused', async () => {
    vendor.reset();
    const res = await callThrough(api, `${vendor.url}/v1`);
    expect(res.status).toBe(403);
    expect(res.message).toBe(`egress to ${new URL(vendor.url).host} is not permitted by EGRESS_ALLOW`);
    expect(vendor.received).toHaveLength(0);
  });
});

describe('EGRESS_ALLOW=127.0.0.1 (the same vendor, permitted)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ EGRESS_ALLOW: '127.0.0.1' });
  });
  afterAll(() => api.close());

  it('the loopback vendor answers', async () => {
    vendor.reset();
    expect((await callThrough(api, `${vendor.url}/v1`)).status).toBe(200);
    expect(vendor.received).toHaveLength(1);
  });
});

describe.skipIf(noTemporal())('sessions under EGRESS_DENY=127.0.0.0/8', () => {
  const world = useSessionWorld({ EGRESS_DENY: '127.0.0.0/8' });

  it("the worker's model call fails the turn at once with egress_denied, and nothing reaches the vendor", async () => {
    const agent = await world.fx.agent();
    const res = await world.fx.converse({ agent_id: agent.id, message: 'hello', context: { role: 'x' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      status: 'failed',
      error: {
        code: 'egress_denied',
        message: `egress to ${new URL(world.fx.vendor.url).host} is denied by EGRESS_DENY`,
      },
    });
    expect(world.fx.vendor.received).toHaveLength(0);
  });
});
