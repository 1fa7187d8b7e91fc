/**
 * Request bodies (api/http/body-reader.ts, docs/security.md#request-bodies-limits-and-timeouts):
 * a body in a malformed Content-Encoding used to be a 500 logged with a stack,
 * on every path and before authentication; every body was read (and
 * decompressed) before the route was matched or the caller authenticated, and
 * a body trickled in a byte at a time held its connection indefinitely. Now a
 * bad encoding is a 400 (415 for an unknown one) in the envelope or the
 * vendor's shape; an unknown path, a request without ADMIN_TOKEN and a gateway
 * call without a virtual key are answered without reading their body (what
 * still arrives is discarded unbuffered, the connection closed once it
 * stalls); bodies are capped after decompression (413), in
 * bytes read at once across the process (503 with Retry-After), and in time
 * between bytes (408); Node's header and request timeouts are configured.
 * Hostile clients are raw sockets, so nothing is smoothed over by a client.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDb, migrateLatest } from '../../core/db/knex.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { spawnApi, type ApiProcess } from '../helpers/api-process.js';
import { createProject, uniqueName } from '../helpers/factories.js';
import { createModel } from '../helpers/factories/config.js';
import { createPrompt } from '../helpers/factories/content.js';
import { createScratchDatabase } from '../helpers/scratch-db.js';
import { FORMATS, startHarness, type Format, type Harness } from './gateway/gateway-harness.js';
import { expectShape } from './gateway/raw-requests.js';

const BASE = '/api/agent-server';
const PROJECTS = `${BASE}/projects`;
const IDLE_MS = 1_000;
const MAX_BODY = 1024 * 1024;
const IN_FLIGHT = 2 * 1024 * 1024;
const REQUEST_TIMEOUT_MS = 3_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** Milliseconds from connecting to the status line. */
  answeredMs: number;
  /** The server closed the connection (within `closeWithinMs` of answering, when given). */
  closed: boolean;
}

interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string | number>;
  /** Written right after the headers (errors writing it, once the server has answered, are ignored). */
  body?: Buffer;
  /** Writes (more of) the body while the connection is open, e.g. a byte at a time. */
  trickle?: { bytes: Buffer; everyMs: number };
  /** How long to wait for the server to close after answering; without it, done once the answer is complete. */
  closeWithinMs?: number;
  timeoutMs?: number;
}

/** One HTTP/1.1 request on its own socket, read byte for byte: what a hostile client sees. */
function raw(baseUrl: string, req: RawRequest): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    let received = Buffer.alloc(0);
    let answeredMs = -1;
    let trickle: NodeJS.Timeout | undefined;
    let settled = false;
    const parse = () => {
      const text = received.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return undefined;
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      return { status: Number(statusLine!.split(' ')[1]), headers, text: text.slice(end + 4) };
    };
    /** The whole answer is in (by Content-Length, or a chunked body's last chunk); else wait for close. */
    const complete = () => {
      const parsed = parse();
      if (!parsed) return false;
      const length = parsed.headers['content-length'];
      if (length !== undefined) return Buffer.byteLength(parsed.text, 'latin1') >= Number(length);
      return parsed.headers['transfer-encoding'] === 'chunked' && parsed.text.endsWith('0\r\n\r\n');
    };
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearInterval(trickle);
      clearTimeout(overall);
      clearTimeout(closeTimer);
      socket.destroy();
      const parsed = parse();
      if (!parsed) return reject(new Error(`no answer (got ${JSON.stringify(received.toString('latin1'))})`));
      resolve({ ...parsed, answeredMs, closed });
    };
    let closeTimer: NodeJS.Timeout | undefined;
    const overall = setTimeout(() => finish(false), req.timeoutMs ?? 15_000);
    socket.on('data', (d: Buffer) => {
      if (answeredMs < 0) {
        answeredMs = performance.now() - started;
        clearInterval(trickle);
        if (req.closeWithinMs !== undefined) closeTimer = setTimeout(() => finish(false), req.closeWithinMs);
      }
      received = Buffer.concat([received, d]);
      if (req.closeWithinMs === undefined && complete()) finish(false);
    });
    socket.on('close', () => finish(answeredMs >= 0));
    socket.on('error', () => {
      // EPIPE / ECONNRESET once the server has answered and closed: the answer is what counts.
    });
    socket.on('connect', () => {
      const head = [`${req.method ?? 'POST'} ${req.path} HTTP/1.1`, `Host: ${url.host}`];
      for (const [k, v] of Object.entries(req.headers ?? {})) head.push(`${k}: ${v}`);
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      if (req.body) socket.write(req.body);
      if (req.trickle) {
        let i = 0;
        const { bytes, everyMs } = req.trickle;
        trickle = setInterval(() => {
          if (i < bytes.length && !socket.destroyed) socket.write(bytes.subarray(i, ++i));
        }, everyMs);
      }
    });
  });
}

const json = (body: unknown) => Buffer.from(JSON.stringify(body));

/** What the caller's side of each gateway surface needs: path and credential headers. */
function gatewayCall(
  h: Harness,
  surface: Format,
  withKey = true,
): { path: string; headers: Record<string, string>; body: Buffer } {
  const model = `${h.providers[surface].name}/m`;
  if (surface === 'openai')
    return {
      path: '/api/gateway/openai/v1/chat/completions',
      headers: withKey ? { authorization: `Bearer ${h.secret}` } : {},
      body: json({ model, messages: [{ role: 'user', content: 'hi' }] }),
    };
  if (surface === 'anthropic')
    return {
      path: '/api/gateway/anthropic/v1/messages',
      headers: { 'anthropic-version': '2023-06-01', ...(withKey ? { 'x-api-key': h.secret } : {}) },
      body: json({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    };
  return {
    path: `/api/gateway/gemini/v1beta/models/${model}:generateContent`,
    headers: withKey ? { 'x-goog-api-key': h.secret } : {},
    body: json({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
  };
}

/** A JSON request's headers with a body of `n` bytes (and an encoding). */
const jsonHeaders = (n: number, extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  'content-length': n,
  ...extra,
});

let h: Harness;
let api: TestApi;
let logMark = 0;

beforeAll(async () => {
  h = await startHarness({
    MAX_BODY_BYTES: String(MAX_BODY),
    BODY_BYTES_IN_FLIGHT_MAX: String(IN_FLIGHT),
    BODY_IDLE_TIMEOUT_MS: String(IDLE_MS),
    HTTP_HEADERS_TIMEOUT_MS: '1000',
    HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
  });
  api = h.api;
});
afterAll(() => h?.close());
beforeEach(() => {
  logMark = api.logs.lines.length;
  FORMATS.forEach((f) => h.vendors[f].reset());
});

const logsSince = () => api.logs.lines.slice(logMark).map((l) => JSON.parse(l) as Record<string, unknown>);
/** Nothing at error level, and no stack anywhere, since the test began. */
function expectQuietLogs(): void {
  const lines = logsSince();
  expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
  expect(lines.filter((l) => JSON.stringify(l).includes('"stack"'))).toEqual([]);
}

const PLAIN = json({ name: 'never-stored' });
const full = gzipSync(PLAIN);
const MALFORMED: Array<[string, string, Buffer]> = [
  ['gzip with a plain body', 'gzip', PLAIN],
  ['deflate with a plain body', 'deflate', PLAIN],
  ['br with a plain body', 'br', PLAIN],
  ['truncated gzip', 'gzip', full.subarray(0, full.length - 12)],
];

describe('Content-Encoding', () => {
  for (const [what, coding, body] of MALFORMED) {
    it(`${what}: a 400 envelope on the configuration API, not a 500`, async () => {
      const res = await raw(api.url, {
        path: PROJECTS,
        headers: jsonHeaders(body.length, { 'content-encoding': coding }),
        body,
      });
      expect(res.status, res.text).toBe(400);
      expect(JSON.parse(res.text)).toMatchObject({
        error: true,
        message: 'Invalid request',
        data: {},
        status: 400,
        errorDetails: { field: 'content-encoding', reason: expect.stringContaining(coding) as string },
      });
      expectQuietLogs();
    });
  }

  for (const surface of FORMATS) {
    it(`${surface}: malformed encodings are 400s in the vendor's shape, an unknown one a 415; nothing goes upstream`, async () => {
      const call = gatewayCall(h, surface);
      for (const [what, coding, body] of MALFORMED) {
        const res = await raw(api.url, {
          path: call.path,
          headers: { ...call.headers, ...jsonHeaders(body.length, { 'content-encoding': coding }) },
          body,
        });
        expect(res.status, `${what}: ${res.text}`).toBe(400);
        expect(expectShape(surface, JSON.parse(res.text))).toMatch(new RegExp(coding));
      }
      const res = await raw(api.url, {
        path: call.path,
        headers: { ...call.headers, ...jsonHeaders(call.body.length, { 'content-encoding': 'zstd' }) },
        body: call.body,
      });
      expect(res.status, res.text).toBe(415);
      expect(expectShape(surface, JSON.parse(res.text))).toMatch(/Content-Encoding/);
      expect(h.vendors[surface].received).toHaveLength(0);
      expectQuietLogs();
    });
  }

  it('an unsupported encoding is a 415 envelope naming the header', async () => {
    for (const coding of ['zstd', 'compress', 'gzip, br', 'constructor']) {
      const res = await raw(api.url, {
        path: PROJECTS,
        headers: jsonHeaders(PLAIN.length, { 'content-encoding': coding }),
        body: PLAIN,
      });
      expect(res.status, res.text).toBe(415);
      expect(JSON.parse(res.text)).toMatchObject({
        error: true,
        message: 'Unsupported media type',
        status: 415,
        errorDetails: { field: 'content-encoding' },
      });
    }
    expectQuietLogs();
  });

  it('gzip, deflate and br bodies are decompressed, on the configuration API and the gateway', async () => {
    for (const [coding, compress] of [
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
    ] as const) {
      const name = uniqueName(coding);
      const body = compress(json({ name }));
      const res = await raw(api.url, {
        path: PROJECTS,
        headers: jsonHeaders(body.length, { 'content-encoding': coding }),
        body,
      });
      expect(res.status, res.text).toBe(200);
      expect(JSON.parse(res.text)).toMatchObject({ data: { name } });
    }
    const call = gatewayCall(h, 'openai');
    const body = gzipSync(call.body);
    const res = await raw(api.url, {
      path: call.path,
      headers: { ...call.headers, ...jsonHeaders(body.length, { 'content-encoding': 'gzip' }) },
      body,
    });
    expect(res.status, res.text).toBe(200);
    expect(h.vendors.openai.received).toHaveLength(1);
  });

  it('a zip bomb stops at MAX_BODY_BYTES decompressed: 413, in the envelope and the vendor shape', async () => {
    // 64 MiB of spaces in about 64 KiB of gzip.
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20), { level: 9 });
    expect(bomb.length).toBeLessThan(MAX_BODY);
    const res = await raw(api.url, {
      path: PROJECTS,
      headers: jsonHeaders(bomb.length, { 'content-encoding': 'gzip' }),
      body: bomb,
    });
    expect(res.status, res.text).toBe(413);
    expect(JSON.parse(res.text)).toMatchObject({ error: true, message: 'Payload too large', status: 413 });
    const call = gatewayCall(h, 'anthropic');
    const viaGateway = await raw(api.url, {
      path: call.path,
      headers: { ...call.headers, ...jsonHeaders(bomb.length, { 'content-encoding': 'gzip' }) },
      body: bomb,
    });
    expect(viaGateway.status, viaGateway.text).toBe(413);
    expectShape('anthropic', JSON.parse(viaGateway.text));
    expectQuietLogs();
  });

  it('invalid JSON is still a 400 naming body; non-JSON content types are not read, as before', async () => {
    const broken = await api.request('POST', PROJECTS, '{"name": ');
    expect(broken.status).toBe(400);
    expect(broken.body.errorDetails.fields?.[0]).toMatchObject({ field: 'body', type: 'body.parse' });
    const proto = await api.request('POST', PROJECTS, '{"name":"x","__proto__":{"admin":true}}');
    expect(proto.status).toBe(400);
    const scalar = await api.request('POST', PROJECTS, '"just a string"');
    expect(scalar.status).toBe(400);
    // text/plain: the body is {} to validation, which names the missing field.
    const text = await api.request('POST', PROJECTS, JSON.stringify({ name: 'x' }), {
      'content-type': 'text/plain',
    });
    expect(text.status).toBe(400);
    expect(text.body.errorDetails.fields?.[0]?.field).toBe('name');
  });
});

describe('bodies are read only after routing and authentication', () => {
  /** Declares 1 MiB, sends 100 bytes and waits: an answer now means the body was not waited for. */
  const partial = (path: string, headers: Record<string, string> = {}) =>
    raw(api.url, {
      path,
      headers: { ...headers, ...jsonHeaders(MAX_BODY) },
      body: Buffer.alloc(100, 0x20),
      timeoutMs: 5_000,
      closeWithinMs: IDLE_MS + 1_000,
    });

  it('an unknown path is a 404 at once, its body never read; the connection closes when the rest stalls', async () => {
    for (const path of [`${BASE}/no-such-thing`, '/nowhere', '/api/gateway/openai/v1/nothing']) {
      const res = await partial(path);
      expect(res.status, `${path}: ${res.text}`).toBe(404);
      expect(res.answeredMs).toBeLessThan(IDLE_MS / 2);
      expect(res.closed).toBe(true);
    }
  });

  for (const surface of FORMATS) {
    it(`${surface}: a call without a valid virtual key is a 401 at once, in the vendor's shape, its body never read`, async () => {
      const call = gatewayCall(h, surface, false);
      for (const headers of [call.headers, { ...call.headers, authorization: 'Bearer sk-not-a-key' }]) {
        const res = await partial(call.path, headers);
        expect(res.status, res.text).toBe(401);
        expectShape(surface, JSON.parse(res.text));
        expect(res.answeredMs).toBeLessThan(IDLE_MS / 2);
        expect(res.closed).toBe(true);
      }
    });
  }

  it('a malformed body without a virtual key is a 401 (authentication comes first)', async () => {
    const call = gatewayCall(h, 'openai', false);
    const res = await raw(api.url, {
      path: call.path,
      headers: { ...call.headers, ...jsonHeaders(PLAIN.length, { 'content-encoding': 'gzip' }) },
      body: PLAIN,
    });
    expect(res.status, res.text).toBe(401);
  });

  describe('with ADMIN_TOKEN', () => {
    let guarded: TestApi;
    beforeAll(async () => {
      guarded = await startTestApi({
        ADMIN_TOKEN: 'request-bodies-admin-token',
        BODY_IDLE_TIMEOUT_MS: String(IDLE_MS),
      });
    });
    afterAll(() => guarded?.close());

    it('a guarded route without the token is a 401 at once, its body never read; with it, the body is read', async () => {
      for (const [method, path] of [
        ['POST', PROJECTS],
        ['PATCH', `${PROJECTS}/00000000-0000-4000-8000-000000000000`],
        ['POST', `${BASE}/no-such-thing`],
      ] as const) {
        const res = await raw(guarded.url, {
          method,
          path,
          headers: jsonHeaders(MAX_BODY, { 'content-encoding': 'gzip' }),
          body: Buffer.alloc(100, 0x20),
          timeoutMs: 5_000,
          closeWithinMs: IDLE_MS + 1_000,
        });
        expect(res.status, `${method} ${path}: ${res.text}`).toBe(path.includes('no-such') ? 404 : 401);
        expect(res.answeredMs).toBeLessThan(1_000);
        expect(res.closed).toBe(true);
      }
      const body = json({ name: uniqueName('guarded') });
      const ok = await raw(guarded.url, {
        path: PROJECTS,
        headers: { ...jsonHeaders(body.length), authorization: 'Bearer request-bodies-admin-token' },
        body,
        closeWithinMs: 300,
      });
      expect(ok.status, ok.text).toBe(200);
      expect(ok.closed).toBe(false);
    });
  });
});

describe('limits and timeouts', () => {
  it('a body trickled slower than BODY_IDLE_TIMEOUT_MS is a 408 envelope and its connection closed', async () => {
    const res = await raw(api.url, {
      path: PROJECTS,
      headers: jsonHeaders(100),
      trickle: { bytes: Buffer.from('{"name":"'.padEnd(100, 'x')), everyMs: IDLE_MS + 500 },
      closeWithinMs: 1_000,
    });
    expect(res.status, res.text).toBe(408);
    expect(JSON.parse(res.text)).toMatchObject({
      error: true,
      message: 'Request timeout',
      data: {},
      status: 408,
    });
    expect(res.answeredMs).toBeGreaterThanOrEqual(IDLE_MS);
    expect(res.answeredMs).toBeLessThan(IDLE_MS + 2_500);
    expect(res.closed).toBe(true);
    expectQuietLogs();
  });

  it('a body that stops half-way on the gateway is a 408 in the vendor shape', async () => {
    const call = gatewayCall(h, 'gemini');
    const res = await raw(api.url, {
      path: call.path,
      headers: { ...call.headers, ...jsonHeaders(call.body.length + 10) },
      body: call.body,
      closeWithinMs: 1_000,
    });
    expect(res.status, res.text).toBe(408);
    expectShape('gemini', JSON.parse(res.text));
    expect(res.closed).toBe(true);
    expect(h.vendors.gemini.received).toHaveLength(0);
  });

  it('a raw (zip) upload goes through the same reader: a stalled one is a 408', async () => {
    const projectId = (await createProject(api)).id;
    const modelId = (await createModel(api, projectId)).id;
    const promptId = (await createPrompt(api, projectId)).id;
    const agent = await api.request<{ id: string }>('POST', `${BASE}/agents?project_id=${projectId}`, {
      name: uniqueName('agent'),
      model_id: modelId,
      prompt_id: promptId,
    });
    const res = await raw(api.url, {
      method: 'PUT',
      path: `${BASE}/agents/${agent.body.data.id}/skills/stalled`,
      headers: { 'content-type': 'application/zip', 'content-length': 1000 },
      body: Buffer.from('PK\u0003\u0004'),
      closeWithinMs: 1_000,
    });
    expect(res.status, res.text).toBe(408);
    expect(res.closed).toBe(true);
  });

  it('past BODY_BYTES_IN_FLIGHT_MAX a body is a 503 with Retry-After, until room is made', async () => {
    // Two slow senders declare just under 1 MiB each: the budget of 2 MiB is all but taken.
    const hog = raw(api.url, {
      path: PROJECTS,
      headers: jsonHeaders(MAX_BODY - 10),
      body: Buffer.from('{"name":"'),
      trickle: { bytes: Buffer.alloc(100, 0x78), everyMs: 200 },
      timeoutMs: 10_000,
    });
    const second = raw(api.url, {
      path: PROJECTS,
      headers: jsonHeaders(MAX_BODY - 10),
      body: Buffer.from('{"name":"'),
      trickle: { bytes: Buffer.alloc(100, 0x78), everyMs: 200 },
      timeoutMs: 10_000,
    });
    await sleep(300);
    const body = json({ name: uniqueName('busy') });
    const padded = Buffer.concat([
      body.subarray(0, -1),
      Buffer.from(`,"description":"${'d'.repeat(400_000)}"}`),
    ]);
    const refused = await raw(api.url, { path: PROJECTS, headers: jsonHeaders(padded.length), body: padded });
    expect(refused.status, refused.text).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(refused.text)).toMatchObject({
      error: true,
      message: 'Service unavailable',
      status: 503,
      errorDetails: {},
    });
    // The same on the gateway, in the vendor's shape.
    const call = gatewayCall(h, 'openai');
    const big = Buffer.concat([call.body.subarray(0, -1), Buffer.from(`,"user":"${'u'.repeat(400_000)}"}`)]);
    const viaGateway = await raw(api.url, {
      path: call.path,
      headers: { ...call.headers, ...jsonHeaders(big.length) },
      body: big,
    });
    expect(viaGateway.status, viaGateway.text).toBe(503);
    expect(viaGateway.headers['retry-after']).toBe('1');
    expectShape('openai', JSON.parse(viaGateway.text));
    // A chunked body (no Content-Length) is counted as it arrives.
    const chunked = await raw(api.url, {
      path: PROJECTS,
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      body: Buffer.concat([
        Buffer.from(`${(900_000).toString(16)}\r\n`),
        Buffer.alloc(900_000, 0x20),
        Buffer.from('\r\n'),
      ]),
    });
    expect(chunked.status, chunked.text).toBe(503);
    // The slow senders end at HTTP_REQUEST_TIMEOUT_MS (Node's 408), giving their room back.
    const [a, b] = await Promise.all([hog, second]);
    expect([a.status, b.status]).toEqual([408, 408]);
    // Room again: the same request is read (and validated: its description is too long to store).
    const read = await raw(api.url, { path: PROJECTS, headers: jsonHeaders(padded.length), body: padded });
    expect(read.status, read.text).toBe(400);
    expect(JSON.parse(read.text)).toMatchObject({ errorDetails: { fields: [{ field: 'description' }] } });
    const lines = logsSince();
    expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
    expect(lines.some((l) => l.level === 40 && /BODY_BYTES_IN_FLIGHT_MAX/.test(String(l.msg)))).toBe(true);
  });

  it("headers slower than HTTP_HEADERS_TIMEOUT_MS, or a request slower than HTTP_REQUEST_TIMEOUT_MS, get Node's 408", async () => {
    const url = new URL(api.url);
    const slowHeaders = await new Promise<{ text: string; ms: number }>((resolve) => {
      const started = performance.now();
      const s = net.connect(Number(url.port), url.hostname, () =>
        s.write(`GET ${BASE}/health HTTP/1.1\r\nHost: ${url.host}\r\n`),
      );
      let text = '';
      s.on('data', (d: Buffer) => (text += d.toString()));
      s.on('error', () => {});
      s.on('close', () => resolve({ text, ms: performance.now() - started }));
    });
    expect(slowHeaders.text).toMatch(/^HTTP\/1\.1 408/);
    expect(slowHeaders.ms).toBeLessThan(3_000);
    // Every byte within the idle timeout, but the whole request too slow.
    const res = await raw(api.url, {
      path: PROJECTS,
      headers: jsonHeaders(100),
      trickle: { bytes: Buffer.from('{"name":"'.padEnd(100, 'x')), everyMs: IDLE_MS / 2 },
      timeoutMs: REQUEST_TIMEOUT_MS + 5_000,
    });
    expect(res.status).toBe(408);
    expect(res.answeredMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    expect(res.answeredMs).toBeLessThan(REQUEST_TIMEOUT_MS + 2_000);
    expect(res.closed).toBe(true);
  });

  it('answers slower than HTTP_REQUEST_TIMEOUT_MS are not cut: a slow JSON answer and a long stream', async () => {
    h.vendors.openai.script({ firstByteDelayMs: REQUEST_TIMEOUT_MS + 500 });
    const call = gatewayCall(h, 'openai');
    const slow = await raw(api.url, {
      path: call.path,
      headers: { ...call.headers, ...jsonHeaders(call.body.length) },
      body: call.body,
      timeoutMs: REQUEST_TIMEOUT_MS + 5_000,
    });
    expect(slow.status, slow.text).toBe(200);
    h.vendors.anthropic.script({
      reply: { text: 'one two three four five six seven eight', usage: { input: 3, output: 8 } },
      chunkDelayMs: 450,
    });
    const started = performance.now();
    const res = await fetch(`${api.url}/api/gateway/anthropic/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': h.secret,
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify({
        model: `${h.providers.anthropic.name}/m`,
        max_tokens: 10,
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThan(REQUEST_TIMEOUT_MS);
    expect(text).toContain('message_stop');
  });
});

describe('memory: 32 concurrent 10 MB bodies nobody may send', () => {
  const TOKEN = 'memory-test-admin-token-0123456789';
  const TEN_MB = 10_000_000;
  let proc: ApiProcess | undefined;
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>> | undefined;

  beforeAll(async () => {
    scratch = await createScratchDatabase('bodies');
    const db = createDb(scratch.url, { max: 2 });
    await migrateLatest(db);
    await db.destroy();
    proc = await spawnApi({
      DATABASE_URL: scratch.url,
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      SECRETS_KEY: randomBytes(32).toString('base64'),
      ADMIN_TOKEN: TOKEN,
    });
  });
  afterAll(async () => {
    await proc?.stop();
    await scratch?.drop();
  });

  const rssKb = () => {
    const status = readFileSync(`/proc/${proc!.child.pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]);
  };

  it('an unknown path, a guarded route without the token and the gateway without a key answer at once; each probe raises RSS < 100 MB', async () => {
    // A 10 MB JSON body: today's parser read and parsed every one of them.
    const body = Buffer.alloc(TEN_MB, 0x78);
    body.write('{"name":"', 0);
    body.write('"}', TEN_MB - 2);
    // Warm up: the routes, the key lookup, the logger and the discarding of an unread rest have
    // run once (the first use of a code path compiles it), one 10 MB body at a time.
    for (const path of [`${BASE}/nothing`, PROJECTS, '/api/gateway/openai/v1/chat/completions']) {
      await raw(proc!.url, { path, headers: jsonHeaders(2), body: Buffer.from('{}') });
      await raw(proc!.url, { path, headers: jsonHeaders(TEN_MB), body, timeoutMs: 20_000 });
    }
    await sleep(500);
    const start = rssKb();
    const targets = [
      { path: `${BASE}/no-such-thing`, status: 404 },
      { path: PROJECTS, status: 401 },
      { path: '/api/gateway/openai/v1/chat/completions', status: 401 },
    ];
    // One probe a target: 32 concurrent 10 MB posts, and how far the API's RSS rose over its
    // RSS when the probe began (buffering them would be +320 MB).
    const grewMb: Record<string, number> = {};
    for (const target of targets) {
      const before = rssKb();
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rssKb())), 20);
      try {
        const results = await Promise.all(
          Array.from({ length: 32 }, () =>
            raw(proc!.url, {
              path: target.path,
              headers: jsonHeaders(TEN_MB),
              body,
              timeoutMs: 20_000,
            }),
          ),
        );
        for (const r of results) {
          expect(r.status, `${target.path}: ${r.text.slice(0, 200)}`).toBe(target.status);
          expect(r.answeredMs).toBeLessThan(5_000);
        }
        await sleep(300);
        peak = Math.max(peak, rssKb());
      } finally {
        clearInterval(sampler);
      }
      grewMb[target.path] = (peak - before) / 1024;
    }
    const probes = Object.values(grewMb).map((mb) => `+${mb.toFixed(1)}`);
    const overall = (rssKb() - start) / 1024;
    console.log(
      `request-bodies: API RSS by probe ${probes.join(', ')} MB; +${overall.toFixed(1)} MB after all three`,
    );
    for (const [path, mb] of Object.entries(grewMb)) expect(mb, path).toBeLessThan(100);
    // Still serving.
    const ok = await fetch(`${proc!.url}${BASE}/health`);
    expect(ok.status).toBe(200);
  });
});
