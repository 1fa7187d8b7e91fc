import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../core/db/knex.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName } from '../helpers/factories.js';
import { databaseUrl } from '../helpers/services.js';
import {
  startAuthenticatedMcpServer,
  startEverythingServer,
  type RunningMcp,
} from '../fixtures/mcp-servers.js';

const M = '/api/agent-server/mcp-servers';

interface McpServerData {
  id: string;
  project_id: string;
  name: string;
  endpoint: string;
  headers: Record<string, string>;
  transport: string;
  created_at: string;
  updated_at: string;
}
interface Tool {
  name: string;
  description?: string;
  input_schema: { type?: string; properties?: Record<string, unknown> };
}

describe('MCP servers API', () => {
  let api: TestApi;
  let db: Db;
  const servers: RunningMcp[] = [];

  beforeAll(async () => {
    api = await startTestApi();
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await api.close();
    await db.destroy();
  });

  it('creates, reads, lists, updates and deletes; header secrets encrypted at rest and redacted', async () => {
    const project = await createProject(api);
    const secret = `s3cret-${randomUUID()}`;
    const body = {
      name: uniqueName('mcp'),
      endpoint: 'http://127.0.0.1:9/mcp',
      headers: { Authorization: `Bearer ${secret}`, 'X-Api-Key': secret, 'X-Tenant': 'acme' },
    };
    const created = await api.request<McpServerData>('POST', `${M}?project_id=${project.id}`, body);
    expect(created.status).toBe(200);
    const server = created.body.data;
    expect(server).toMatchObject({
      project_id: project.id,
      name: body.name,
      endpoint: body.endpoint,
      transport: 'streamable_http',
      headers: { Authorization: '[redacted]', 'X-Api-Key': '[redacted]', 'X-Tenant': 'acme' },
    });

    const row = (await db('mcp_servers').where({ id: server.id }).first()) as Record<string, unknown>;
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(JSON.stringify(row)).not.toContain('acme');

    expect((await api.request<McpServerData>('GET', `${M}/${server.id}`)).body.data).toEqual(server);
    expect((await api.request('GET', `${M}/${server.id}?project_id=${randomUUID()}`)).status).toBe(404);
    const list = await api.request<McpServerData[]>('GET', `${M}?project_id=${project.id}`);
    expect(list.body.data.map((s) => s.id)).toEqual([server.id]);

    // Sending the redacted read-back again keeps the stored secret; a new tenant value replaces the old.
    const patched = await api.request<McpServerData>('PATCH', `${M}/${server.id}`, {
      transport: 'sse',
      headers: { ...server.headers, 'X-Tenant': 'globex' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      transport: 'sse',
      headers: { Authorization: '[redacted]', 'X-Tenant': 'globex' },
    });

    const del = await api.request('DELETE', `${M}/${server.id}`);
    expect(del.body).toMatchObject({ error: false, data: {} });
    expect((await api.request('GET', `${M}/${server.id}`)).status).toBe(404);
    // Nothing secret in any log line, and the capture demonstrably works.
    expect(api.logs.text).toContain(created.headers.get('x-request-id'));
    expect(api.logs.text).not.toContain(secret);
  });

  it('validates input and scope', async () => {
    const project = await createProject(api);
    const cases: Array<[unknown, string]> = [
      [{ name: 'x', endpoint: 'ftp://example.org' }, 'endpoint'],
      [{ name: 'x', endpoint: 'not a url' }, 'endpoint'],
      [{ endpoint: 'http://127.0.0.1/mcp' }, 'name'],
      [{ name: 'x', endpoint: 'http://127.0.0.1/mcp', transport: 'websocket' }, 'transport'],
      [{ name: 'x', endpoint: 'http://127.0.0.1/mcp', headers: { 'bad header': 'v' } }, 'headers.bad header'],
      [{ name: 'x', endpoint: 'http://127.0.0.1/mcp', headers: { ok: 'line\r\nbreak' } }, 'headers.ok'],
      [{ name: 'x', endpoint: 'http://127.0.0.1/mcp', extra: 1 }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const res = await api.request('POST', `${M}?project_id=${project.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errorDetails.fields?.map((f) => f.field)).toContain(field);
    }
    // A rejected header value may be a credential: the error names the field without echoing it.
    const leaky = await api.request('POST', `${M}?project_id=${project.id}`, {
      name: 'x',
      endpoint: 'http://127.0.0.1/mcp',
      headers: { Authorization: 'Bearer sk-live-SECRET\nX-Injected: 1' },
    });
    expect(leaky.status).toBe(400);
    expect(leaky.text).not.toContain('sk-live-SECRET');
    expect((await api.request('POST', M, { name: 'x', endpoint: 'http://127.0.0.1/mcp' })).status).toBe(400);
    expect(
      (
        await api.request('POST', `${M}?project_id=${randomUUID()}`, {
          name: 'x',
          endpoint: 'http://127.0.0.1/mcp',
        })
      ).status,
    ).toBe(404);
    expect((await api.request<McpServerData[]>('GET', `${M}?project_id=${project.id}`)).body.data).toEqual(
      [],
    );
    const first = await api.request('POST', `${M}?project_id=${project.id}`, {
      name: 'dup',
      endpoint: 'http://127.0.0.1/mcp',
    });
    expect(first.status).toBe(200);
    expect(
      (
        await api.request('POST', `${M}?project_id=${project.id}`, {
          name: 'dup',
          endpoint: 'http://127.0.0.1/x',
        })
      ).status,
    ).toBe(409);
  });

  it.each(['streamableHttp', 'sse'] as const)(
    'inspects the real server-everything over %s',
    async (transport) => {
      const everything = await startEverythingServer(transport);
      servers.push(everything);
      const project = await createProject(api);
      const created = await api.request<McpServerData>('POST', `${M}?project_id=${project.id}`, {
        name: uniqueName('everything'),
        endpoint: everything.url,
        transport: transport === 'sse' ? 'sse' : 'streamable_http',
      });
      const res = await api.request<{ tools: Tool[] }>('POST', `${M}/${created.body.data.id}/inspect`);
      expect(res.status).toBe(200);
      const names = res.body.data.tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum']));
      const echo = res.body.data.tools.find((t) => t.name === 'echo');
      expect(echo?.input_schema.properties).toHaveProperty('message');
    },
  );

  it('sends the configured headers, and answers 502 saying why when the server refuses or is down', async () => {
    const token = `tok-${randomUUID()}`;
    const auth = await startAuthenticatedMcpServer({ token, tenant: 'acme' });
    servers.push(auth);
    const project = await createProject(api);
    const good = await api.request<McpServerData>('POST', `${M}?project_id=${project.id}`, {
      name: uniqueName('auth'),
      endpoint: auth.url,
      headers: { Authorization: `Bearer ${token}`, 'X-Tenant': 'acme' },
    });
    const ok = await api.request<{ tools: Tool[] }>('POST', `${M}/${good.body.data.id}/inspect`);
    expect(ok.status).toBe(200);
    expect(ok.body.data.tools.map((t) => t.name)).toEqual(['whoami']);

    const wrong = await api.request<McpServerData>('POST', `${M}?project_id=${project.id}`, {
      name: uniqueName('auth-wrong'),
      endpoint: auth.url,
      headers: { Authorization: 'Bearer nope', 'X-Tenant': 'acme' },
    });
    const refused = await api.request('POST', `${M}/${wrong.body.data.id}/inspect`);
    expect(refused.status).toBe(502);
    expect(refused.body).toMatchObject({ error: true, message: 'Bad gateway', status: 502 });
    expect(String(refused.body.errorDetails.reason)).toMatch(/could not connect.*401/i);
    expect(JSON.stringify(refused.body)).not.toContain(token);

    const down = await api.request<McpServerData>('POST', `${M}?project_id=${project.id}`, {
      name: uniqueName('down'),
      endpoint: 'http://127.0.0.1:9/mcp',
    });
    const unreachable = await api.request('POST', `${M}/${down.body.data.id}/inspect`);
    expect(unreachable.status).toBe(502);
    expect(String(unreachable.body.errorDetails.reason)).toMatch(/ECONNREFUSED|fetch failed/);
  });
});
