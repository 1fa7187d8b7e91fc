/**
 * The MCP door's HTTP edge, no turn involved: ADMIN_TOKEN as a bearer token
 * (like the REST API), the Host and Origin checks that keep a browser page
 * from reaching a local server through DNS rebinding, every refusal a
 * JSON-RPC error with its status.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { uniqueName } from '../../helpers/factories.js';

const TOKEN = 'mcp-door-test-token-0123456789';
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});

describe('MCP door: who may call', () => {
  let api: TestApi;
  let url: string;
  beforeAll(async () => {
    api = await startTestApi({ ADMIN_TOKEN: TOKEN });
    const project = await api.request<{ id: string }>(
      'POST',
      '/api/agent-server/projects',
      { name: uniqueName('p') },
      { authorization: `Bearer ${TOKEN}` },
    );
    url = `${api.url}/api/mcp/${project.body.data.id}`;
  });
  afterAll(async () => {
    await api?.close();
  });

  const post = (headers: Record<string, string>, to = url) =>
    fetch(to, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: INIT,
    });

  it('without the token, or with another, 401 as a JSON-RPC error; with it, the handshake', async () => {
    const refused: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer wrong-token-0123456789' },
      { 'x-api-key': TOKEN },
    ];
    for (const headers of refused) {
      const res = await post(headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(await res.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: 'Unauthorized' },
      });
    }
    const ok = await post({ authorization: `Bearer ${TOKEN}` });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('mcp-session-id')).toBeTruthy();
    expect(await ok.text()).toMatch(/"protocolVersion":"2025-11-25"/);
    // An unknown project says so only to a caller with the token.
    const other = `${api.url}/api/mcp/00000000-0000-4000-8000-000000000000`;
    expect((await post({}, other)).status).toBe(401);
    expect((await post({ authorization: `Bearer ${TOKEN}` }, other)).status).toBe(404);
  });

  it('a foreign Host is 421 and a foreign Origin 403, both JSON-RPC errors; a loopback Origin is served', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const port = new URL(api.url).port;
    const origin = await post({ ...auth, origin: 'http://evil.example.com' });
    expect(origin.status).toBe(403);
    expect(((await origin.json()) as { error: { code: number } }).error.code).toBe(-32600);
    const local = await post({ ...auth, origin: `http://localhost:${port}` });
    expect(local.status).toBe(200);
    await local.text();
    // fetch will not send another Host: a raw request does.
    const { request } = await import('node:http');
    const status = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        url,
        {
          method: 'POST',
          headers: { host: 'evil.example.com', 'content-type': 'application/json', ...auth },
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        },
      );
      req.on('error', reject);
      req.end(INIT);
    });
    expect(status.status).toBe(421);
    expect(JSON.parse(status.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
  });
});
