/**
 * What the configuration API shows of stored
 * credentials. MCP header values are redacted by what they look like as well
 * as by their name; credentials inside a provider's base_url or an MCP
 * endpoint are shown redacted while the stored value keeps working; an MCP
 * server that echoes the credentials it got does not get them passed on by
 * `POST /mcp-servers/{id}/inspect`, its trace or the logs.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../core/db/knex.js';
import { currentTelemetry } from '../../core/telemetry/telemetry.js';
import { startEchoingMcpServer, type RunningMcp } from '../fixtures/mcp-servers.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName } from '../helpers/factories.js';
import { PROVIDERS, providerName, type ProviderData } from '../helpers/factories/config.js';
import { databaseUrl } from '../helpers/services.js';

const M = '/api/agent-server/mcp-servers';
const opaque = () => randomBytes(12).toString('hex');

interface McpServerData {
  id: string;
  endpoint: string;
  headers: Record<string, string>;
}

let api: TestApi;
let db: Db;
const running: RunningMcp[] = [];
beforeAll(async () => {
  api = await startTestApi();
  db = createDb(databaseUrl());
});
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()));
  await api?.close();
  await db?.destroy();
});

const storedHeaders = async (id: string) => {
  const row = (await db('mcp_servers').where({ id }).first()) as { headers_enc: string; endpoint: string };
  return {
    endpoint: row.endpoint,
    headers: api.server.deps.secrets.decryptJson<Record<string, string>>(row.headers_enc),
  };
};

describe('MCP server headers and endpoint', () => {
  it('redacts header values that look like credentials whatever the header is called, and keeps them on a round trip', async () => {
    const project = await createProject(api);
    const jwt = `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${opaque()}`;
    const headers = {
      'X-Auth': 'hunter2', // by name: anything with "auth" in it
      'X-Forward': `Bearer ${opaque()}`, // by value: an auth scheme
      'X-Context': jwt, // by value: a JWT
      'X-Blob': `k${opaque()}${opaque()}`, // by value: a long random token
      'X-Upstream': `https://bot:${opaque()}@example.test/hook`, // by value: a URL with credentials
      'X-Tenant': 'acme',
      'X-Region': 'eu-west-1',
      Accept: 'application/json',
    };
    const endpoint = `http://robot:${opaque()}@127.0.0.1:9/mcp?team=blue&api_key=${opaque()}`;
    const created = await api.request<McpServerData>('POST', `${M}?project_id=${project.id}`, {
      name: uniqueName('mcp'),
      endpoint,
      headers,
    });
    expect(created.status).toBe(200);
    const expected = {
      'X-Auth': '[redacted]',
      'X-Forward': '[redacted]',
      'X-Context': '[redacted]',
      'X-Blob': '[redacted]',
      'X-Upstream': '[redacted]',
      'X-Tenant': 'acme',
      'X-Region': 'eu-west-1',
      Accept: 'application/json',
    };
    const shownEndpoint = 'http://[redacted]@127.0.0.1:9/mcp?team=blue&api_key=[redacted]';
    expect(created.body.data).toMatchObject({ headers: expected, endpoint: shownEndpoint });
    const id = created.body.data.id;
    const read = await api.request<McpServerData>('GET', `${M}/${id}`);
    expect(read.body.data).toMatchObject({ headers: expected, endpoint: shownEndpoint });
    const listed = await api.request<McpServerData[]>('GET', `${M}?project_id=${project.id}`);
    expect(listed.text).not.toContain('hunter2');
    expect(listed.text).not.toContain(jwt);

    // A client that saves what it read keeps the stored credentials.
    const saved = await api.request<McpServerData>('PATCH', `${M}/${id}`, {
      endpoint: read.body.data.endpoint,
      headers: read.body.data.headers,
    });
    expect(saved.status).toBe(200);
    expect(await storedHeaders(id)).toEqual({ endpoint, headers });

    // A redaction marker in some other URL has nothing to keep: refused.
    const other = await api.request('PATCH', `${M}/${id}`, {
      endpoint: 'http://[redacted]@127.0.0.2:9/mcp',
    });
    expect(other.status).toBe(400);
  });

  it('inspect does not pass on credentials an MCP server echoes back, nor record them', async () => {
    const echo = await startEchoingMcpServer(401);
    running.push(echo);
    const project = await createProject(api);
    const bearer = opaque();
    const xAuth = `short${randomUUID().slice(0, 6)}`;
    const urlToken = opaque();
    const created = await api.request<McpServerData>('POST', `${M}?project_id=${project.id}`, {
      name: uniqueName('echo'),
      endpoint: `${echo.url}?token=${urlToken}`,
      headers: { Authorization: `Bearer ${bearer}`, 'X-Auth': xAuth, 'X-Tenant': 'acme' },
    });
    expect(created.status).toBe(200);
    const logStart = api.logs.lines.length;
    const res = await api.request('POST', `${M}/${created.body.data.id}/inspect`);
    expect(res.status).toBe(502);
    const reason = String(res.body.errorDetails.reason);
    // The server's answer is still there (status, the tenant it saw); the credentials are not.
    expect(reason).toMatch(/401/);
    expect(reason).toContain('acme');
    for (const secret of [bearer, xAuth, urlToken]) expect(res.text).not.toContain(secret);

    await currentTelemetry()!.flush();
    const rows = await db('spans')
      .where({ trace_id: res.headers.get('x-trace-id')! })
      .select(db.raw('name, status_message, attributes::text as attributes, events::text as events'));
    const stored = JSON.stringify(rows);
    expect(stored).toContain('401');
    for (const secret of [bearer, xAuth, urlToken]) expect(stored).not.toContain(secret);

    const logs = api.logs.lines.slice(logStart).join('\n');
    for (const secret of [bearer, xAuth, urlToken]) expect(logs).not.toContain(secret);
  });
});

describe('provider base_url with credentials', () => {
  it('is shown redacted, stored intact, and kept when a client sends back what it read', async () => {
    const password = opaque();
    const queryKey = opaque();
    const baseUrl = `http://gw-user:${password}@127.0.0.1:9/v1?key=${queryKey}`;
    const shown = 'http://[redacted]@127.0.0.1:9/v1?key=[redacted]';
    const name = providerName();
    const created = await api.request<ProviderData>('POST', PROVIDERS, {
      name,
      provider_type: 'openai',
      base_url: baseUrl,
      api_key: `sk-test-${opaque()}`,
    });
    expect(created.status).toBe(200);
    expect(created.body.data.base_url).toBe(shown);
    const id = created.body.data.id;
    expect((await api.request<ProviderData>('GET', `${PROVIDERS}/${id}`)).body.data.base_url).toBe(shown);
    const list = await api.request<ProviderData[]>('GET', `${PROVIDERS}?limit=200`);
    expect(list.text).not.toContain(password);
    expect(list.text).not.toContain(queryKey);

    const saved = await api.request<ProviderData>('PATCH', `${PROVIDERS}/${id}`, {
      base_url: shown,
      timeout_ms: 30_000,
    });
    expect(saved.status).toBe(200);
    expect(saved.body.data.base_url).toBe(shown);
    const row = (await db('providers').where({ id }).first()) as { base_url: string };
    expect(row.base_url).toBe(baseUrl);

    const elsewhere = await api.request('PATCH', `${PROVIDERS}/${id}`, {
      base_url: 'http://[redacted]@127.0.0.1:10/v1',
    });
    expect(elsewhere.status).toBe(400);

    // Without credentials a base_url is shown as it is.
    const plain = await api.request<ProviderData>('PATCH', `${PROVIDERS}/${id}`, {
      base_url: 'http://127.0.0.1:9/v1?team=blue',
    });
    expect(plain.body.data.base_url).toBe('http://127.0.0.1:9/v1?team=blue');
  });
});
