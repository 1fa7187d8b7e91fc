/**
 * A provider's error text may echo the credentials we sent it (docs/security.md): an error status's body and a stream's error event both reach
 * the caller, spans and runs only with our secrets removed.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream } from '../../../core/llm/client.js';
import { UpstreamError } from '../../../core/llm/errors.js';
import { postUpstream } from '../../../core/llm/http.js';
import { ADAPTERS } from '../../../core/llm/providers/index.js';
import type { ProviderTarget } from '../../../core/llm/types.js';
import { chatStream } from '../../../api/gateway/calls.js';
import { SURFACES } from '../../../api/gateway/surfaces/index.js';

const API_KEY = 'q0a1b2c3d4e5f6a7b8c9d0e1f2';
const HEADER_SECRET = 'hdr9f8e7d6c5b4a3';
let server: Server;
let target: ProviderTarget;

beforeAll(async () => {
  // Echoes what it got: as an error status for /status, as a stream error event otherwise.
  server = createServer((req, res) => {
    const echoed = `you sent authorization=${req.headers.authorization} proxy=${String(req.headers['x-proxy-token'])}`;
    req.resume();
    if (req.url?.includes('status')) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: echoed } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`data: ${JSON.stringify({ error: { message: echoed } })}\n\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  target = {
    name: 'prov',
    type: 'openai',
    base_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    api_key: API_KEY,
    headers: { 'X-Proxy-Token': HEADER_SECRET },
    connect_timeout_ms: 5_000,
    timeout_ms: 5_000,
  };
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function failure(p: Promise<unknown>): Promise<UpstreamError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpstreamError);
  return err as UpstreamError;
}

function expectRedacted(err: UpstreamError): void {
  expect(err.message).toContain('you sent authorization=');
  expect(err.message).not.toContain(API_KEY);
  expect(err.message).not.toContain(HEADER_SECRET);
  expect(err.stack).not.toContain(API_KEY);
}

describe('provider errors that echo our credentials', () => {
  it('an error status', async () => {
    const call = { url: `${target.base_url}/status`, headers: ADAPTERS.openai.headers(target), body: {} };
    const err = await failure(postUpstream(target, call));
    expect(err.status).toBe(401);
    expectRedacted(err);
  });

  it('a stream error event, translated (agent turns, other-format callers)', async () => {
    const events = await openStream(target, {
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    });
    expectRedacted(
      await failure(
        (async () => {
          for await (const _ of events);
        })(),
      ),
    );
  });

  it('a stream error event, passed through to a caller of the same format', async () => {
    const opened = await chatStream({
      surface: SURFACES.openai,
      target,
      model: 'm',
      body: { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true },
      signal: new AbortController().signal,
    });
    expectRedacted(
      await failure(
        (async () => {
          for await (const _ of opened.chunks);
        })(),
      ),
    );
  });
});
