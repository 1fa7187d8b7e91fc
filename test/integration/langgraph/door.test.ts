/**
 * The Agent Protocol door's own rules, without a worker: ADMIN_TOKEN taken as
 * the SDK's `apiKey` (x-api-key) or a bearer token, errors in its `{detail}`
 * shape, and its routes in the OpenAPI document under their own tag.
 */
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api.js';

const TOKEN = 'agent-protocol-token-0123456789';

describe('the Agent Protocol door', () => {
  let api: TestApi;
  let base: string;

  beforeAll(async () => {
    api = await startTestApi({ ADMIN_TOKEN: TOKEN });
    const res = await fetch(`${api.url}/api/agent-server/projects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `lg-door-${Date.now()}` }),
    });
    const project = ((await res.json()) as { data: { id: string } }).data;
    base = `${api.url}/api/langgraph/${project.id}`;
  });
  afterAll(async () => {
    await api?.close();
  });

  it('takes ADMIN_TOKEN as the SDK apiKey (x-api-key) or as a bearer token, and refuses anything else', async () => {
    const refused = await fetch(`${base}/threads/search`, { method: 'POST', body: '{}' });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ detail: 'Unauthorized' });
    const wrong = new Client({ apiUrl: base, apiKey: 'not-the-token', defaultHeaders: {} });
    await expect(wrong.threads.search()).rejects.toThrow(/401/);

    const client = new Client({ apiUrl: base, apiKey: TOKEN });
    const thread = await client.threads.create({ metadata: { via: 'x-api-key' } });
    expect(thread.status).toBe('idle');
    const bearer = await fetch(`${base}/threads/${thread.thread_id}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(bearer.status).toBe(200);
    // What Agent Chat UI asks first.
    const info = await fetch(`${base}/info`, { headers: { 'x-api-key': TOKEN } });
    expect(await info.json()).toMatchObject({ flags: { assistants: true, crons: true } });
  });

  it('answers bad input in its own shape: 422 with the fields, 404 with what is missing', async () => {
    const h = { 'x-api-key': TOKEN, 'content-type': 'application/json' };
    const badId = await fetch(`${api.url}/api/langgraph/not-a-uuid/threads/search`, {
      method: 'POST',
      headers: h,
      body: '{}',
    });
    expect(badId.status).toBe(422);
    const detail = ((await badId.json()) as { detail: Array<{ loc: string[]; msg: string }> }).detail;
    expect(detail[0]!.msg).toMatch(/project_id/);
    const noProject = await fetch(
      `${api.url}/api/langgraph/00000000-0000-4000-8000-000000000000/threads/search`,
      {
        method: 'POST',
        headers: h,
        body: '{}',
      },
    );
    expect(noProject.status).toBe(404);
    expect(await noProject.json()).toEqual({ detail: 'Project not found' });
    const badThreadId = await fetch(`${base}/threads/${encodeURIComponent('a b')}`, { headers: h });
    expect(badThreadId.status).toBe(422);
    const badSearch = await fetch(`${base}/threads/search`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({ limit: -1, status: 'sleepy' }),
    });
    expect(badSearch.status).toBe(422);
    const fields = ((await badSearch.json()) as { detail: Array<{ loc: string[] }> }).detail.map((d) =>
      d.loc.join('.'),
    );
    expect(fields).toEqual(expect.arrayContaining(['body.limit', 'body.status']));
    const notJson = await fetch(`${base}/threads`, { method: 'POST', headers: h, body: '{"metadata":' });
    expect(notJson.status).toBeGreaterThanOrEqual(400);
    expect(notJson.status).toBeLessThan(500);
    expect(await notJson.json()).toHaveProperty('detail');
    const nowhere = await fetch(`${base}/no-such-route`, { headers: h });
    expect(nowhere.status).toBe(404);
    expect(await nowhere.json()).toEqual({ detail: 'Not found' });
  });

  it('is documented in the OpenAPI document under its own tag, with its own error shape', async () => {
    const doc = (await (await fetch(`${api.url}/api/agent-server/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { tags: string[]; responses: Record<string, unknown> }>>;
      components: { securitySchemes: Record<string, unknown> };
    };
    const op = doc.paths['/api/langgraph/{project_id}/threads/{thread_id}/runs/wait']!.post!;
    expect(op.tags).toEqual(['Agent Protocol (LangGraph)']);
    expect(JSON.stringify(op.responses['422'])).toContain('ErrorDetail');
    expect(doc.components.securitySchemes).toHaveProperty('apiKey');
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/api/langgraph/')).length).toBeGreaterThan(15);
  });
});
