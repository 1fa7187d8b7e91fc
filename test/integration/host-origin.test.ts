/**
 * Host and Origin checking (docs/security.md): a page on a name the attacker
 * controls, rebound to this server's address, gets a 421 instead of the
 * configuration; a browser page of another origin cannot change configuration
 * (403). Sent with raw `http.request` so the Host header is exactly the one
 * written (fetch sets its own).
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type Envelope, type TestApi } from '../helpers/api.js';
import { createProvider } from '../helpers/factories/config.js';

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: unknown;
}

function raw(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const { hostname, port } = new URL(base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const all = payload === undefined ? headers : { 'content-type': 'application/json', ...headers };
  return new Promise<Raw>((resolve, reject) => {
    const req = http.request({ host: hostname, port, method, path, headers: all }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const envelope = (r: Raw) => r.json as Envelope;

describe('Host checking with the default allow-list (loopback; no token, as in the README)', () => {
  let api: TestApi;
  let port: string;
  const get = (path: string, host: string) => raw(api.url, 'GET', path, { host });
  beforeAll(async () => {
    api = await startTestApi();
    port = new URL(api.url).port;
    await createProvider(api);
  });
  afterAll(() => api.close());

  it('refuses a foreign Host with 421 in the envelope, and shows no data', async () => {
    const res = await get('/api/agent-server/providers', `attacker.example:${port}`);
    expect(res.status).toBe(421);
    expect(envelope(res)).toMatchObject({
      error: true,
      message: 'Misdirected request',
      status: 421,
      data: {},
    });
    expect(res.text).not.toContain('api_key');
    expect(res.headers['x-request-id']).toBeTruthy();
    // Without a port, with a trailing dot, in capitals: the same refusal.
    for (const host of ['attacker.example', 'ATTACKER.example.', '10.0.0.1.attacker.example'])
      expect((await get('/api/agent-server/providers', host)).status, host).toBe(421);
  });

  it('answers the loopback names with any port', async () => {
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      'localhost',
      '127.1.2.3:9',
      `[::1]:${port}`,
    ]) {
      const res = await get('/api/agent-server/providers', host);
      expect(res.status, host).toBe(200);
      expect((envelope(res).data as unknown[]).length, host).toBeGreaterThan(0);
    }
  });

  it('refuses a missing or malformed Host', async () => {
    // HTTP/1.0 allows no Host at all.
    const noHost = await new Promise<number>((resolve, reject) => {
      const req = http.request({
        host: '127.0.0.1',
        port,
        path: '/api/agent-server/projects',
        setHost: false,
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect([400, 421]).toContain(noHost);
    expect((await get('/api/agent-server/projects', 'local host')).status).toBe(421);
  });

  it('leaves the health checks open to any Host (probes use the pod IP)', async () => {
    const live = await get('/api/agent-server/health', '10.1.2.3:6060');
    expect(live.status).toBe(200);
    expect(envelope(live).data).toEqual({ status: 'ok' });
    const ready = await get('/api/agent-server/health/ready', 'attacker.example');
    // 503 when the run has no Temporal: either way the readiness answer, not a refusal.
    expect([200, 503]).toContain(ready.status);
    expect(envelope(ready).status).toBe(ready.status);
  });

  it('refuses the console and the gateway too, the gateway in the vendor’s error shape', async () => {
    expect((await get('/console/', 'attacker.example')).status).toBe(421);
    const res = await raw(
      api.url,
      'POST',
      '/api/gateway/openai/v1/chat/completions',
      { host: 'attacker.example', authorization: 'Bearer sk-vk-whatever' },
      { model: 'x/y', messages: [{ role: 'user', content: 'hi' }] },
    );
    expect(res.status).toBe(421);
    expect(res.json).toMatchObject({ error: { message: expect.any(String) as string } });
    expect(res.json).not.toHaveProperty('status');
    const anthropic = await raw(
      api.url,
      'POST',
      '/api/gateway/anthropic/v1/messages',
      { host: 'attacker.example', 'x-api-key': 'sk-vk-whatever' },
      { model: 'x/y', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
    );
    expect(anthropic.status).toBe(421);
    expect(anthropic.json).toMatchObject({ type: 'error', error: { type: expect.any(String) as string } });
  });
});

describe('Origin checking on configuration changes', () => {
  let api: TestApi;
  let host: string;
  const names = new Set<string>();
  const create = (origin: string | undefined, hostHeader = host) => {
    const name = `origin-${randomUUID()}`;
    names.add(name);
    const headers: Record<string, string> = { host: hostHeader };
    if (origin !== undefined) headers.origin = origin;
    return raw(api.url, 'POST', '/api/agent-server/projects', headers, { name }).then((res) => ({
      res,
      name,
    }));
  };
  const exists = async (name: string) => {
    const list = await api.request<Array<{ name: string }>>('GET', '/api/agent-server/projects?limit=200');
    return list.body.data.some((p) => p.name === name);
  };
  beforeAll(async () => {
    api = await startTestApi();
    host = new URL(api.url).host;
  });
  afterAll(() => api.close());

  it('refuses a foreign Origin with 403 and changes nothing', async () => {
    const { res, name } = await create('https://attacker.example');
    expect(res.status).toBe(403);
    expect(envelope(res)).toMatchObject({ error: true, message: 'Forbidden', status: 403, data: {} });
    expect(await exists(name)).toBe(false);
    // Every state-changing method.
    for (const method of ['PATCH', 'PUT', 'DELETE']) {
      const r = await raw(api.url, method, `/api/agent-server/projects/${randomUUID()}`, {
        host,
        origin: 'http://attacker.example',
      });
      expect(r.status, method).toBe(403);
    }
  });

  it('refuses Origin: null (sandboxed frames, file: pages)', async () => {
    const { res, name } = await create('null');
    expect(res.status).toBe(403);
    expect(await exists(name)).toBe(false);
  });

  it('takes the console’s own origin, a loopback origin, and no Origin at all (curl, SDKs)', async () => {
    for (const origin of [`http://${host}`, 'http://localhost:5173', undefined]) {
      const { res, name } = await create(origin);
      expect(res.status, String(origin)).toBe(200);
      expect(await exists(name)).toBe(true);
    }
  });

  it('does not refuse reads, nor the gateway (browser apps call it cross-origin with virtual keys)', async () => {
    const read = await raw(api.url, 'GET', '/api/agent-server/projects', {
      host,
      origin: 'https://attacker.example',
    });
    expect(read.status).toBe(200);
    const gateway = await raw(
      api.url,
      'POST',
      '/api/gateway/openai/v1/chat/completions',
      { host, origin: 'https://app.example', authorization: 'Bearer sk-vk-not-a-real-key' },
      { model: 'x/y', messages: [{ role: 'user', content: 'hi' }] },
    );
    // The key decides there: 401 for a bad key, never a 403 for the Origin.
    expect(gateway.status).toBe(401);
  });
});

describe('ALLOWED_HOSTS and PUBLIC_URL', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({
      ALLOWED_HOSTS: 'agents.example.com, *.corp.example',
      PUBLIC_URL: 'https://public.example.org/base',
    });
  });
  afterAll(() => api.close());

  it('answers the listed names, subdomains of a wildcard, PUBLIC_URL’s host and loopback; nothing else', async () => {
    const status = async (host: string) =>
      (await raw(api.url, 'GET', '/api/agent-server/projects', { host })).status;
    for (const host of [
      'agents.example.com',
      'agents.example.com:443',
      'a.corp.example',
      'a.b.corp.example:8080',
      'public.example.org',
      'localhost:1',
    ])
      expect(await status(host), host).toBe(200);
    for (const host of [
      'corp.example',
      'evil-corp.example',
      'example.com',
      'agents.example.com.evil',
      '10.0.0.5',
    ])
      expect(await status(host), host).toBe(421);
  });

  it('takes an Origin on the list from another host (a front-end on its own name)', async () => {
    const post = (origin: string) =>
      raw(
        api.url,
        'POST',
        '/api/agent-server/projects',
        { host: 'agents.example.com', origin },
        { name: `allowed-${randomUUID()}` },
      );
    expect((await post('https://ui.corp.example')).status).toBe(200);
    expect((await post('https://public.example.org')).status).toBe(200);
    expect((await post('https://evil.example')).status).toBe(403);
  });
});

describe('ALLOWED_HOSTS=*', () => {
  it('turns both checks off', async () => {
    const api = await startTestApi({ ALLOWED_HOSTS: '*' });
    try {
      expect(
        (await raw(api.url, 'GET', '/api/agent-server/projects', { host: 'anything.example' })).status,
      ).toBe(200);
      const post = await raw(
        api.url,
        'POST',
        '/api/agent-server/projects',
        { host: 'anything.example', origin: 'null' },
        { name: `any-${randomUUID()}` },
      );
      expect(post.status).toBe(200);
    } finally {
      await api.close();
    }
  });
});
