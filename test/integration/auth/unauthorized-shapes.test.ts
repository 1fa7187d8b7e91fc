import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { createTestToken, createTestUser } from '../../helpers/users.js';

/**
 * Users mode: a missing, unknown, expired or revoked credential is a 401 in
 * each surface's own error shape, so every client reads it as it reads any
 * refusal of that protocol; the gateway keeps its virtual keys.
 */
describe('401 in every surface’s own shape (users mode)', () => {
  let api: TestApi;
  let projectId: string;
  let good: string;
  const bad: Record<string, string> = {};
  const adminToken = `break-glass-${randomUUID()}`;

  beforeAll(async () => {
    api = await startTestApi({ AUTH_MODE: 'users', ADMIN_TOKEN: adminToken, METRICS_ENABLED: 'true' });
    const db = api.server.deps.db;
    const owner = await createTestUser(db, { orgRole: 'owner' });
    good = owner.token;
    const made = await api.request<{ id: string }>(
      'POST',
      '/api/agent-server/projects',
      { name: `shapes-${randomUUID().slice(0, 8)}` },
      { authorization: `Bearer ${good}` },
    );
    projectId = made.body.data.id;
    bad.unknown = 'ags_pat_unknown-token-of-no-one';
    bad.expired = await createTestToken(db, { userId: owner.id, expiresAt: new Date(Date.now() - 1_000) });
    bad.revoked = await createTestToken(db, { userId: owner.id });
    await db('api_tokens')
      .where({ token_prefix: bad.revoked.slice(0, 12) })
      .update({ revoked_at: new Date() });
    const deactivated = await createTestUser(db, { orgRole: 'owner' });
    await db('users').where({ id: deactivated.id }).update({ active: false });
    bad.deactivated = deactivated.token;
  });
  afterAll(async () => {
    await api?.close();
  });

  const send = async (
    method: string,
    path: string,
    token: string | undefined,
    body?: unknown,
    extra = {},
  ) => {
    const res = await fetch(api.url + path, {
      method,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...extra,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text, headers: res.headers };
  };

  const credentials = () => [undefined, bad.unknown!, bad.expired!, bad.revoked!, bad.deactivated!];

  it('the configuration API and converse: the envelope', async () => {
    for (const token of credentials()) {
      for (const [method, path, body] of [
        ['GET', `/api/agent-server/agents?project_id=${projectId}`, undefined],
        ['POST', '/api/agent-server/converse', { message: 'hi' }],
      ] as const) {
        const res = await send(method, path, token, body);
        expect(res.status, `${method} ${path} with ${token ?? 'nothing'}`).toBe(401);
        expect(res.json).toMatchObject({ error: true, status: 401, message: 'Unauthorized' });
      }
    }
    // The same token, good: through.
    expect((await send('GET', `/api/agent-server/agents?project_id=${projectId}`, good)).status).toBe(200);
  });

  it('the Agent Protocol: {detail}, with the token also taken as x-api-key', async () => {
    const path = `/api/langgraph/${projectId}/assistants/search`;
    for (const token of credentials()) {
      const res = await send('POST', path, token, {});
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ detail: expect.any(String) as string });
    }
    expect((await send('POST', path, undefined, {}, { 'x-api-key': bad.expired })).status).toBe(401);
    expect((await send('POST', path, undefined, {}, { 'x-api-key': good })).status).toBe(200);
  });

  it('MCP: a JSON-RPC error with WWW-Authenticate', async () => {
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    for (const token of credentials()) {
      const res = await send('POST', `/api/mcp/${projectId}`, token, ping);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(res.json).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) as number } });
    }
  });

  it('A2A: a JSON-RPC error; the agent card stays public', async () => {
    const agentId = randomUUID();
    for (const token of credentials()) {
      const res = await send('POST', `/api/a2a/${agentId}`, token, {
        jsonrpc: '2.0',
        id: 1,
        method: 'GetTask',
      });
      expect(res.status).toBe(401);
      expect(res.json).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { message: expect.stringMatching(/Unauthorized/) as string },
      });
    }
    // No such agent, but no credential asked: 404, not 401.
    expect((await send('GET', `/api/a2a/${agentId}/.well-known/agent-card.json`, undefined)).status).toBe(
      404,
    );
  });

  it('/metrics: 401 text without an organisation admin credential', async () => {
    for (const token of credentials()) {
      const res = await send('GET', '/metrics', token);
      expect(res.status).toBe(401);
      expect(res.text).toBe('Unauthorized\n');
    }
    const member = await createTestUser(api.server.deps.db, { projects: { [projectId]: 'admin' } });
    expect((await send('GET', '/metrics', member.token)).status).toBe(401);
    expect((await send('GET', '/metrics', good)).status).toBe(200);
  });

  it('the gateway keeps virtual keys: a user token is not one (vendor shapes)', async () => {
    const openai = await send('POST', '/api/gateway/openai/v1/chat/completions', good, {
      model: 'm',
      messages: [],
    });
    expect(openai.status).toBe(401);
    expect(openai.json).toMatchObject({
      error: { type: expect.any(String) as string, message: expect.any(String) as string },
    });
    const anthropic = await send(
      'POST',
      '/api/gateway/anthropic/v1/messages',
      undefined,
      {},
      { 'x-api-key': good },
    );
    expect(anthropic.status).toBe(401);
    expect(anthropic.json).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });

  it('the public list needs nothing', async () => {
    for (const path of [
      '/api/agent-server/health',
      '/api/agent-server/openapi.json',
      '/api/agent-server/docs',
      '/oauth/client-metadata.json',
    ])
      expect((await send('GET', path, undefined)).status, path).toBe(200);
  });

  it('ADMIN_TOKEN is the break-glass owner; ADMIN_TOKEN_IN_USERS_MODE=false refuses it', async () => {
    expect((await send('GET', '/api/agent-server/providers', adminToken)).status).toBe(200);
    const strict = await startTestApi({
      AUTH_MODE: 'users',
      ADMIN_TOKEN: adminToken,
      ADMIN_TOKEN_IN_USERS_MODE: 'false',
    });
    try {
      const res = await fetch(`${strict.url}/api/agent-server/providers`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      expect(res.status).toBe(401);
    } finally {
      await strict.close();
    }
  });
});
