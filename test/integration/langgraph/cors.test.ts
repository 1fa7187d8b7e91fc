/**
 * CORS for the Agent Protocol door (docs/security.md#agent-protocol-cors):
 * origins in AGENT_PROTOCOL_CORS_ORIGINS get preflights answered and
 * `Access-Control-Allow-Origin` on the door's answers; any other origin gets
 * no CORS header, and its state-changing requests are refused (403) like on
 * the configuration API. Sent with `http.request` so Origin is exactly as
 * written, as a browser would send it.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../core/config.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { createProject } from '../../helpers/factories.js';

const CHAT_UI = 'https://chat.example.com';
const OTHER = 'https://evil.example';

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
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
        let json: unknown = null;
        try {
          json = JSON.parse(text);
        } catch {
          // not JSON (a preflight's empty answer)
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** What the SDK's `client.threads.create()` makes a browser send first. */
const preflight = (origin: string) => ({
  origin,
  'access-control-request-method': 'POST',
  'access-control-request-headers': 'content-type,x-api-key',
});

describe('Agent Protocol CORS with AGENT_PROTOCOL_CORS_ORIGINS set', () => {
  let api: TestApi;
  let door: string;
  beforeAll(async () => {
    api = await startTestApi({ AGENT_PROTOCOL_CORS_ORIGINS: `${CHAT_UI}, http://localhost:3000` });
    door = `/api/langgraph/${(await createProject(api)).id}`;
  });
  afterAll(() => api.close());

  it('answers a preflight from a listed origin with the methods and headers the SDK sends', async () => {
    const res = await raw(api.url, 'OPTIONS', `${door}/threads`, preflight(CHAT_UI));
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(CHAT_UI);
    expect(res.headers['access-control-allow-methods']).toMatch(/\bPOST\b.*\bDELETE\b/);
    const allowed = String(res.headers['access-control-allow-headers']).split(', ');
    expect(allowed).toEqual(
      expect.arrayContaining(['content-type', 'x-api-key', 'authorization', 'last-event-id']),
    );
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('lets a listed origin create a thread and read its answer and headers', async () => {
    const res = await raw(api.url, 'POST', `${door}/threads`, { origin: CHAT_UI }, { metadata: { a: 1 } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ metadata: { a: 1 } });
    expect(res.headers['access-control-allow-origin']).toBe(CHAT_UI);
    expect(String(res.headers['access-control-expose-headers'])).toMatch(/Content-Location.*Location/);
    // Errors carry it too, so the page can read `{detail}`.
    const missing = await raw(api.url, 'GET', `${door}/threads/${crypto.randomUUID()}`, { origin: CHAT_UI });
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ detail: 'Thread not found' });
    expect(missing.headers['access-control-allow-origin']).toBe(CHAT_UI);
  });

  it('gives an unlisted origin no CORS headers and refuses its changes', async () => {
    const pre = await raw(api.url, 'OPTIONS', `${door}/threads`, preflight(OTHER));
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    const post = await raw(api.url, 'POST', `${door}/threads`, { origin: OTHER }, {});
    expect(post.status).toBe(403);
    expect(post.json).toEqual({
      detail: 'cross-origin request refused: the Origin is not one of AGENT_PROTOCOL_CORS_ORIGINS',
    });
    expect(post.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('sends no CORS headers outside the door, even to a listed origin', async () => {
    const pre = await raw(api.url, 'OPTIONS', '/api/agent-server/projects', preflight(CHAT_UI));
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    const post = await raw(api.url, 'POST', '/api/agent-server/projects', { origin: CHAT_UI }, { name: 'x' });
    expect(post.status).toBe(403);
  });
});

describe('Agent Protocol CORS without the setting (the default)', () => {
  let api: TestApi;
  let door: string;
  beforeAll(async () => {
    api = await startTestApi();
    door = `/api/langgraph/${(await createProject(api)).id}`;
  });
  afterAll(() => api.close());

  it('answers no preflight and refuses a foreign origin; SDKs without Origin are unaffected', async () => {
    const pre = await raw(api.url, 'OPTIONS', `${door}/threads`, preflight(CHAT_UI));
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    const post = await raw(api.url, 'POST', `${door}/threads`, { origin: CHAT_UI }, {});
    expect(post.status).toBe(403);
    const search = await raw(api.url, 'POST', `${door}/threads/search`, { origin: CHAT_UI }, {});
    expect(search.status).toBe(403);
    const plain = await raw(api.url, 'POST', `${door}/threads`, {}, {});
    expect(plain.status).toBe(200);
    expect(plain.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('AGENT_PROTOCOL_CORS_ORIGINS validation', () => {
  it('stops start-up naming a bad entry', () => {
    expect(() => loadConfig({ AGENT_PROTOCOL_CORS_ORIGINS: 'https://chat.example.com/app' })).toThrow(
      /AGENT_PROTOCOL_CORS_ORIGINS.*without a path/,
    );
    expect(() => loadConfig({ AGENT_PROTOCOL_CORS_ORIGINS: 'chat.example.com' })).toThrow(
      /AGENT_PROTOCOL_CORS_ORIGINS.*not an origin/,
    );
    expect(
      loadConfig({ AGENT_PROTOCOL_CORS_ORIGINS: 'HTTPS://Chat.Example.com:443, *' }).agentProtocolCorsOrigins,
    ).toEqual({
      any: true,
      origins: ['https://chat.example.com'],
    });
  });
});
