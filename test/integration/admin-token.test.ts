/**
 * ADMIN_TOKEN covers every configuration route however its path is spelled.
 * Sent with raw `http.request` so the path reaches the server exactly as
 * written (fetch would normalise `/./` and some percent-encodings).
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';

const TOKEN = 'admin-token-for-tests-0123456789';

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

function raw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
) {
  const { hostname, port } = new URL(base);
  return new Promise<Raw>((resolve, reject) => {
    const req = http.request({ host: hostname, port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Spellings of a guarded path that some layer might treat as the same route. */
const VARIANTS = [
  '/API/agent-server/providers',
  '/api/Agent-Server/projects',
  '/api/agent-server/PROVIDERS',
  '//api/agent-server/providers',
  '/api//agent-server/providers',
  '/api/agent-server//providers',
  '/api/./agent-server/providers',
  '/api/agent-server/./providers',
  '/api/agent-server/x/../providers',
  '/api/agent-server/%70roviders',
  '/api/agent-server/%50roviders',
  '/%61pi/agent-server/providers',
  '/api%2Fagent-server%2Fproviders',
  '/api/agent-server/providers/',
  '/api/agent-server/providers//',
  '/api/agent-server/providers?x=/api/agent-server/health',
  '/api/agent-server/providers;/health',
  '/api/agent-server/health/../providers',
  '/api/agent-server/health%2F..%2Fproviders',
  '/api/agent-server/docs/../providers',
  '/api/agent-server/openapi.json/../providers',
  '/api/gateway/../agent-server/providers',
  '/API/gateway/../agent-server/providers',
];

describe('ADMIN_TOKEN covers what the router matched', () => {
  let api: TestApi;
  const auth = { authorization: `Bearer ${TOKEN}` };
  beforeAll(async () => {
    api = await startTestApi({ ADMIN_TOKEN: TOKEN });
  });
  afterAll(async () => {
    await api.close();
  });

  it('never answers a path variant of a guarded route without the token', async () => {
    for (const path of VARIANTS) {
      for (const method of ['GET', 'HEAD', 'OPTIONS']) {
        const res = await raw(api.url, method, path);
        expect([401, 404], `${method} ${path} → ${res.status}`).toContain(res.status);
        if (method !== 'HEAD') expect(res.text, `${method} ${path}`).not.toMatch(/"error":false/);
      }
    }
  });

  it('refuses writes by another spelling: no virtual key is minted', async () => {
    const body = JSON.stringify({ name: 'sneaky', providers: [] });
    for (const path of [
      '/API/agent-server/virtual-keys',
      '/api/Agent-Server/virtual-keys',
      '//api/agent-server/virtual-keys',
    ]) {
      const res = await raw(api.url, 'POST', path, { 'content-type': 'application/json' }, body);
      expect([401, 404], `POST ${path}`).toContain(res.status);
    }
    const list = await api.request<Array<{ name: string }>>(
      'GET',
      '/api/agent-server/virtual-keys',
      undefined,
      auth,
    );
    expect(list.status).toBe(200);
    expect(list.body.data.map((k) => k.name)).not.toContain('sneaky');
  });

  it('guards HEAD and OPTIONS of a guarded route, and answers them with the token', async () => {
    expect((await raw(api.url, 'HEAD', '/api/agent-server/providers')).status).toBe(401);
    expect((await raw(api.url, 'OPTIONS', '/api/agent-server/providers')).status).toBe(401);
    expect((await raw(api.url, 'HEAD', '/api/agent-server/providers', auth)).status).toBe(200);
    const options = await raw(api.url, 'OPTIONS', '/api/agent-server/providers', auth);
    expect(options.status).toBe(200);
    expect(options.headers.allow).toMatch(/GET/);
  });

  it('answers the canonical path with the token, and a trailing slash the same way', async () => {
    for (const path of ['/api/agent-server/providers', '/api/agent-server/providers/']) {
      expect((await raw(api.url, 'GET', path)).status, path).toBe(401);
      expect((await raw(api.url, 'GET', path, auth)).status, path).toBe(200);
    }
  });

  it('keeps health, the OpenAPI document and the docs page with its assets open', async () => {
    for (const path of [
      '/api/agent-server/health',
      '/api/agent-server/health/',
      '/api/agent-server/openapi.json',
      '/api/agent-server/docs',
      '/api/agent-server/docs/assets/swagger-ui.css',
      '/api/agent-server/docs/assets/swagger-ui-bundle.js',
    ]) {
      expect((await raw(api.url, 'GET', path)).status, path).toBe(200);
    }
    expect((await raw(api.url, 'GET', '/api/agent-server/docs/assets/nope.js')).status).toBe(404);
  });

  it('declares the bearer scheme as optional security on guarded routes only', async () => {
    const doc = JSON.parse((await raw(api.url, 'GET', '/api/agent-server/openapi.json')).text) as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    expect(doc.paths['/api/agent-server/providers']!.get!.security).toEqual([
      { adminToken: [] },
      { session: [] },
      {},
    ]);
    expect(doc.paths['/api/agent-server/health']!.get!.security).toEqual([]);
  });

  it('answers gateway paths in any case with the vendor error shape, never the admin envelope', async () => {
    const res = await raw(
      api.url,
      'POST',
      '/API/gateway/openai/v1/chat/completions',
      {
        'content-type': 'application/json',
      },
      '{}',
    );
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text)).toMatchObject({
      error: { type: 'invalid_request_error', code: 'unknown_url' },
    });
    const anthropic = await raw(
      api.url,
      'POST',
      '/Api/Gateway/anthropic/v1/messages',
      {
        'content-type': 'application/json',
      },
      '{}',
    );
    expect(anthropic.status).toBe(404);
    expect(JSON.parse(anthropic.text)).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });
});
