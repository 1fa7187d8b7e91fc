/**
 * Users mode through the official clients of the doors other programs use:
 * an API token is what the LangGraph SDK sends as its apiKey and what the MCP
 * SDK sends as a bearer token; a viewer's token reads but does not change.
 */
import { Client as LangGraphClient } from '@langchain/langgraph-sdk';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { uniqueName } from '../../helpers/factories.js';
import { createTestToken, createTestUser } from '../../helpers/users.js';

describe('API tokens in the official protocol clients (users mode)', () => {
  let api: TestApi;
  let projectId: string;
  let developer: string;
  let viewer: string;

  beforeAll(async () => {
    api = await startTestApi({ AUTH_MODE: 'users' });
    const db = api.server.deps.db;
    const owner = await createTestUser(db, { orgRole: 'owner' });
    const made = await api.request<{ id: string }>(
      'POST',
      '/api/agent-server/projects',
      { name: uniqueName('p') },
      { authorization: `Bearer ${owner.token}` },
    );
    projectId = made.body.data.id;
    developer = (await createTestUser(db, { projects: { [projectId]: 'developer' } })).token;
    viewer = await createTestToken(db, { projects: { [projectId]: 'viewer' }, name: 'dashboards' });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('the LangGraph SDK: a token as apiKey reads; a viewer cannot create; no token is refused', async () => {
    const apiUrl = `${api.url}/api/langgraph/${projectId}`;
    const dev = new LangGraphClient({ apiUrl, apiKey: developer });
    expect(await dev.assistants.search({ limit: 5 })).toEqual([]);
    const thread = await dev.threads.create();
    expect(thread.thread_id).toEqual(expect.any(String));

    const view = new LangGraphClient({ apiUrl, apiKey: viewer });
    expect((await view.threads.search({ limit: 5 })).map((t) => t.thread_id)).toContain(thread.thread_id);
    await expect(view.threads.create()).rejects.toThrow(/403/);

    const anonymous = new LangGraphClient({ apiUrl, apiKey: null, defaultHeaders: {} });
    await expect(anonymous.assistants.search({ limit: 1 })).rejects.toThrow(/401/);
  });

  it('the MCP SDK: a token as the bearer token connects and lists; none is refused', async () => {
    const url = new URL(`${api.url}/api/mcp/${projectId}`);
    const client = new McpClient({ name: 'test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { authorization: `Bearer ${developer}` } },
      }),
    );
    const { tools } = await client.listTools();
    expect(Array.isArray(tools)).toBe(true);
    await client.close();

    const refused = new McpClient({ name: 'test', version: '1' });
    await expect(refused.connect(new StreamableHTTPClientTransport(url))).rejects.toThrow();
  });
});
