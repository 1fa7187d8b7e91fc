/**
 * bench/cancel: how fast POST /runs/{id}/cancel takes effect while a turn's
 * work is held (API and worker as their own processes, the Temporal dev
 * server, Postgres, the real Docker engine), for three kinds of work:
 *
 *  - model:   the scripted vendor sends the first words of a streamed answer and holds the stream;
 *  - mcp:     an MCP tool call that never answers (a Streamable HTTP server in this process);
 *  - sandbox: `sleep` running in the session's Docker sandbox.
 *
 * Each round starts a streamed turn, waits until the work is held (the
 * vendor's stream is open, the MCP handler has been entered, the `sleep`
 * process exists), waits SETTLE_MS plus a random part of one heartbeat
 * period more, then times from sending the cancel
 * (`interrupt`) to: (a) its answer (the API answers once the run has ended,
 * status `cancelled`), (b) the held work stopped (the vendor's connection
 * closed; the MCP server saw the request cancelled or its connection closed;
 * the `sleep` process gone from /proc, zombies counted as gone), and the
 * `run.cancelled` event on the turn's stream. The session is the same for
 * every round of a kind (a user pressing Stop, then going on).
 * Target: both (a) and (b) ≤ 1 s (median).
 *
 * Run: flock /tmp/test.lock npm run bench -- cancel   (builds the sandbox image if needed)
 * BENCH_CANCEL_ROUNDS (default 15), BENCH_CANCEL_KINDS (default model,mcp,sandbox).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { serveStatelessMcp } from '../../test/fixtures/mcp-servers.js';
import { openaiSpec } from '../../test/fixtures/vendors/openai.js';
import type { Reply } from '../../test/fixtures/vendors/scripted-server.js';
import { benchProject, startPlatform } from '../lib/platform.js';
import { ROOT } from '../lib/scratch.js';

type Kind = 'model' | 'mcp' | 'sandbox';
const ROUNDS = Number(process.env.BENCH_CANCEL_ROUNDS ?? 15);
const WARMUP = 2;
const KINDS = (process.env.BENCH_CANCEL_KINDS ?? 'model,mcp,sandbox').split(',') as Kind[];
/** After the work is held, before the cancel: the turn is in its steady state (heartbeats running). */
const SETTLE_MS = Number(process.env.BENCH_CANCEL_SETTLE_MS ?? 500);
/**
 * Plus a random part over one heartbeat period (activities/session/turn-run.ts
 * HEARTBEAT_INTERVAL_MS): a cancel reaches a running activity with its next
 * heartbeat, so a fixed wait would land every round at the same phase.
 */
const JITTER_MS = 400;
/** How long to wait for held work to stop before calling it "not stopped". */
const STOP_WAIT_MS = 15_000;

const pct = (xs: number[], p: number) =>
  xs.length
    ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!
    : NaN;
const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(0)} ms` : '—');
const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

/** The moment held work was seen to start, and the moment it stopped, for the round in progress. */
interface Held {
  started: PromiseWithResolvers<void>;
  stoppedAt?: number;
}
let held: Held = { started: Promise.withResolvers() };
const newRound = (): Held => (held = { started: Promise.withResolvers() });
const stopped = (h: Held) => (h.stoppedAt ??= performance.now());

// ---- The scripted model: the last user message says what to do ----
const vendor = createServer((req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      model: string;
      stream?: boolean;
      messages: Array<{ role: string; content: unknown }>;
    };
    const lastUser = body.messages.map((m) => m.role).lastIndexOf('user');
    const content = body.messages[lastUser]?.content;
    const text = typeof content === 'string' ? content : JSON.stringify(content ?? '');
    const afterTool = body.messages.slice(lastUser).some((m) => m.role === 'tool');
    const sleepFor = /^sleep (\S+)$/.exec(text)?.[1];
    const reply: Reply = afterTool
      ? { text: 'done' }
      : text === 'use the tool'
        ? { tool_calls: [{ name: 'held', arguments: {} }] }
        : sleepFor
          ? { tool_calls: [{ name: 'execute_bash_commands', arguments: { code: `sleep ${sleepFor}` } }] }
          : { text: 'one two three four five six' };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(openaiSpec.json(reply, body.model)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const events = openaiSpec.sse(reply, body.model, body);
    if (text !== 'hold the stream' || afterTool) {
      res.end(events.join(''));
      return;
    }
    // The first words, then nothing until the caller goes away.
    const firstText = events.findIndex((e) => /"content":"[^"]/.test(e));
    res.write(events.slice(0, firstText + 1).join(''));
    const h = held;
    res.on('close', () => stopped(h));
    h.started.resolve();
  });
});
await new Promise<void>((r) => vendor.listen(0, '127.0.0.1', r));
const vendorUrl = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;

// ---- An MCP server whose `held` tool never answers; it notes when the call is cancelled or cut off ----
const mcp = await serveStatelessMcp((res) => {
  const server = new McpServer({ name: 'bench-held', version: '1.0.0' });
  server.registerTool('held', { description: 'Never answers' }, async (extra) => {
    const h = held;
    extra.signal.addEventListener('abort', () => stopped(h));
    res.on('close', () => stopped(h));
    h.started.resolve();
    await new Promise(() => {});
    return { content: [] };
  });
  return server;
});
const mcpUrl = mcp.url;

// ---- The sandbox `sleep`: found in /proc (the containers' processes are the host's) ----
/** The pid of the process whose command line is exactly `sleep <arg>`, if any. */
async function findSleep(arg: string): Promise<number | undefined> {
  const want = `sleep\0${arg}\0`;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmd = await readFile(`/proc/${entry}/cmdline`, 'latin1').catch(() => '');
    if (cmd === want) return Number(entry);
  }
  return undefined;
}

/** Gone, or a zombie (it has exited; only its parent has not reaped it yet). */
async function processGone(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'latin1').catch(() => undefined);
  return stat === undefined || stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

async function watchSleep(arg: string, h: Held, until: () => boolean): Promise<void> {
  let pid: number | undefined;
  while (pid === undefined) {
    if (until()) return;
    pid = await findSleep(arg);
    if (pid === undefined) await sleep(20);
  }
  h.started.resolve();
  while (!(await processGone(pid))) await sleep(2);
  stopped(h);
}

// ---- Platform: Temporal dev server, Postgres, API and worker processes ----
const dockerOk = await new Docker()
  .ping()
  .then(() => true)
  .catch(() => false);
const kinds = KINDS.filter((k) => k !== 'sandbox' || dockerOk);
if (kinds.length < KINDS.length) console.log('no Docker engine: the sandbox kind is left out');
if (kinds.includes('sandbox'))
  execFileSync('bash', [path.join(ROOT, 'sandbox-daemon/image/build.sh')], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
const tmp = mkdtempSync(path.join(os.tmpdir(), 'cancel-bench-'));
const installation = `bench-cancel-${randomUUID().slice(0, 8)}`;
const platform = await startPlatform('cancel', {
  DATA_DIR: tmp,
  SANDBOX_ENABLED: String(kinds.includes('sandbox')),
  SANDBOX_BACKEND: 'docker',
  SANDBOX_HOST_DIR: path.join(tmp, 'hosts'),
  SANDBOX_TOKEN_SECRET: 'bench-cancel-secret-0123456789abcdef',
  SANDBOX_INSTALLATION: installation,
  SANDBOX_IDLE_TIMEOUT_MS: '600000',
  SANDBOX_POOL_SIZE: '0',
});
const api = { url: platform.url };

async function post<T>(p: string, body: unknown): Promise<{ status: number; data: T }> {
  const res = await fetch(`${api.url}${p}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { data: T };
  return { status: res.status, data: json.data };
}
const create = <T>(p: string, body: unknown) => platform.call<T>('POST', p, body);

const { q, modelId, promptId } = await benchProject(platform, vendorUrl);
const model = { id: modelId };
const prompt = { id: promptId };
const mcpServer = await create<{ id: string }>(`/api/agent-server/mcp-servers${q}`, {
  name: 'bench-held',
  endpoint: mcpUrl,
});
const agentFields: Record<Kind, Record<string, unknown>> = {
  model: {},
  mcp: { mcp_servers: [{ mcp_server_id: mcpServer.id, tool_filters: ['held'] }] },
  sandbox: { sandbox: { enabled: true } },
};

interface Round {
  answer: number;
  stopped: number;
  event: number;
  status: string;
}

/** Streams a turn; resolves `runId` at run.created, and notes when run.cancelled arrives. */
function streamTurn(agentId: string, conversationId: string, message: string) {
  const runId = Promise.withResolvers<string>();
  let cancelledAt: number | undefined;
  const done = (async () => {
    const res = await fetch(`${api.url}/api/agent-server/converse${q}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: agentId, conversation_id: conversationId, message, stream: true }),
    });
    const decoder = new TextDecoder();
    let buf = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      const id = /"run_id":"([^"]+)"/.exec(buf)?.[1];
      if (id) runId.resolve(id);
      if (cancelledAt === undefined && buf.includes('event: run.cancelled')) cancelledAt = performance.now();
    }
    runId.reject(new Error(`the turn's stream ended without a run id: ${buf.slice(0, 500)}`));
  })();
  return { runId: runId.promise, done, cancelledAt: () => cancelledAt };
}

async function round(kind: Kind, agentId: string, conversationId: string): Promise<Round> {
  const h = newRound();
  const sleepArg = `${1000 + Math.floor(Math.random() * 9000)}.${Math.floor(Math.random() * 1000)}`;
  const message =
    kind === 'model' ? 'hold the stream' : kind === 'mcp' ? 'use the tool' : `sleep ${sleepArg}`;
  const turn = streamTurn(agentId, conversationId, message);
  let turnOver = false;
  void turn.done.finally(() => (turnOver = true));
  const watching = kind === 'sandbox' ? watchSleep(sleepArg, h, () => turnOver) : undefined;
  await Promise.race([
    h.started.promise,
    sleep(60_000).then(() => {
      throw new Error(`${kind}: the work was not held within 60 s`);
    }),
  ]);
  const runId = await turn.runId;
  await sleep(SETTLE_MS + Math.random() * JITTER_MS);
  const t0 = performance.now();
  const res = await post<{ status: string }>(`/api/agent-server/runs/${runId}/cancel${q}`, {
    action: 'interrupt',
  });
  const answer = performance.now() - t0;
  const deadline = performance.now() + STOP_WAIT_MS;
  while (h.stoppedAt === undefined && performance.now() < deadline) await sleep(2);
  await turn.done;
  await watching;
  return {
    answer,
    stopped: h.stoppedAt === undefined ? Infinity : h.stoppedAt - t0,
    event: (turn.cancelledAt() ?? Infinity) - t0,
    status: res.status === 200 ? res.data.status : `HTTP ${res.status}`,
  };
}

console.log(
  `machine: ${process.platform} ${process.arch}, ${os.cpus().length} cores, node ${process.version}, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
const rows: string[] = [];
for (const kind of kinds) {
  const agent = await create<{ id: string }>(`/api/agent-server/agents${q}`, {
    name: `bench-${kind}`,
    model_id: model.id,
    prompt_id: prompt.id,
    ...agentFields[kind],
  });
  const conversationId = `bench-cancel-${kind}-${randomUUID()}`;
  const results: Round[] = [];
  for (let i = 0; i < ROUNDS + WARMUP; i++) {
    const r = await round(kind, agent.id, conversationId);
    if (r.status !== 'cancelled') throw new Error(`${kind}: the cancel answered ${r.status}`);
    if (i >= WARMUP) results.push(r);
  }
  const answer = results.map((r) => r.answer);
  const stop = results.map((r) => r.stopped);
  const both = results.map((r) => Math.max(r.answer, r.stopped));
  const event = results.map((r) => r.event);
  const notStopped = stop.filter((s) => !Number.isFinite(s)).length;
  const met = pct(answer, 50) <= 1000 && pct(both, 50) <= 1000 ? 'yes' : '**no**';
  rows.push(
    `| ${kind} | ${results.length} | ${ms(pct(answer, 50))} (p90 ${ms(pct(answer, 90))}) | ${ms(pct(stop, 50))} (p90 ${ms(pct(stop, 90))})${notStopped ? `, ${notStopped} not stopped` : ''} | ${ms(pct(both, 50))} | ${ms(pct(event, 50))} | ${met} |`,
  );
  console.log(
    `${kind}: answer ${answer.map((x) => x.toFixed(0)).join(' ')}; stopped ${stop.map((x) => x.toFixed(0)).join(' ')}`,
  );
}
console.log(
  '\n| held work | n | (a) cancel answered, p50 | (b) work stopped, p50 | max(a, b), p50 | `run.cancelled` on the stream, p50 | target ≤ 1 s |\n|---|---|---|---|---|---|---|',
);
for (const r of rows) console.log(r);

await platform.stop();
if (kinds.includes('sandbox')) {
  const d = new Docker();
  const filters = JSON.stringify({ label: [`agent-server.installation=${installation}`] });
  for (const c of await d.listContainers({ all: true, filters }))
    await d
      .getContainer(c.Id)
      .remove({ force: true })
      .catch(() => {});
  for (const v of (await d.listVolumes({ filters })).Volumes ?? [])
    await d
      .getVolume(v.Name)
      .remove()
      .catch(() => {});
}
rmSync(tmp, { recursive: true, force: true });
vendor.close();
await mcp.close();
process.exit(0);
