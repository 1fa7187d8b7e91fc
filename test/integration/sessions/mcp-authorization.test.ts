/**
 * Runs that meet an MCP server wanting OAuth authorization, on the real
 * stack: a real authorization server (oidc-provider), an SDK-built MCP server
 * admitting only its tokens, the API, workers as their own processes, the
 * scripted vendor. The run pauses (`awaiting_authorization`) with the URL a
 * person opens, at the turn's listing or at a call (step-up); the flow back at
 * our callback resumes it, even on a worker started after it paused; the
 * agent's authorization_timeout_ms goes on without the server (listing) or
 * answers the call with an error (call). No token ever shows in API answers,
 * logs or stored spans.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import type { RunEventType } from '../../../core/db/tables/run-events.js';
import {
  ADMIN,
  browseToCallback,
  closeServer,
  PRE,
  SCOPE,
  startAuthorizationServer,
  startProtectedMcp,
  type AuthorizationServer,
  type ProtectedMcp,
} from '../../fixtures/oauth-servers.js';
import { uniqueName } from '../../helpers/factories.js';
import { freePort } from '../../helpers/ports.js';
import { databaseUrl, noTemporal } from '../../helpers/services.js';
import { killHard, sessionEnv, spawnWorker, startFixture, waitFor, type Fixture } from './session-harness.js';

interface Run {
  run_id: string;
  status: string;
  output: { content: string } | null;
  warnings: string[];
  pause: { reason: string; timeout_at: string | null; details: Record<string, unknown> } | null;
  tool_calls: Array<{ id: string; name: string; output?: string; is_error?: boolean }>;
}

type Worker = Awaited<ReturnType<typeof spawnWorker>>;

/** Stops a worker as an operator would (SIGTERM, graceful), killing it if it lingers. */
async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const lingered = await Promise.race([
    exited.then(() => false),
    new Promise<boolean>((r) => setTimeout(() => r(true), 15_000)),
  ]);
  if (lingered) await killHard(child);
}

describe.skipIf(noTemporal())("runs waiting for an MCP server's OAuth authorization", () => {
  let fx: Fixture;
  let db: Db;
  let as: AuthorizationServer;
  let mcp: ProtectedMcp;
  let callback: string;
  let worker: Worker;
  const started = new Date();
  /** Every API answer and callback page, and the output of workers already stopped: looked through for tokens. */
  const seen: string[] = [];

  const request = async <T>(method: string, path: string, body?: unknown) => {
    const res = await fx.api.request<T>(method, path, body);
    seen.push(res.text);
    return res;
  };
  const run = async (id: string) => (await request<Run>('GET', `/api/agent-server/runs/${id}`)).body.data;
  const until = (id: string, status: string, ms = 20_000) =>
    waitFor(async () => ((await run(id)).status === status ? run(id) : undefined), ms, `run ${status}`);
  const events = (id: string, type: RunEventType): Promise<Array<{ data: Record<string, unknown> }>> =>
    db('run_events').where({ run_id: id, type }).orderBy('seq').select('data');

  beforeAll(async () => {
    const port = await freePort();
    callback = `http://127.0.0.1:${port}/oauth/callback`;
    let endpoint = '';
    as = await startAuthorizationServer(() => endpoint, callback);
    mcp = await startProtectedMcp(
      () => as.oidc,
      () => as.issuer,
    );
    endpoint = mcp.endpoint();
    const env = sessionEnv({
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: 'debug',
      OTEL_BSP_SCHEDULE_DELAY: '200',
    });
    fx = await startFixture(env);
    worker = await spawnWorker(env);
    db = createDb(databaseUrl());
  }, 90_000);
  afterAll(async () => {
    if (worker) await killHard(worker.child);
    await fx?.close();
    await db?.destroy();
    if (mcp) await closeServer(mcp.server);
    if (as) await closeServer(as.server);
  });
  beforeEach(() => fx.vendor.reset());

  /** An MCP server at `path` of the protected MCP server; `oauth` its client settings. */
  async function mcpServer(path: '/mcp' | '/stepup', oauth?: Record<string, unknown>) {
    const name = uniqueName('oauth');
    const res = await request<{ id: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${fx.projectId}`,
      {
        name,
        endpoint: mcp.endpoint(path),
        ...(oauth ? { oauth } : {}),
      },
    );
    expect(res.status, res.text).toBe(200);
    return { id: res.body.data.id, name };
  }

  /** The person follows the URL in their browser and lands on our callback. */
  async function authorizeAt(url: string): Promise<void> {
    expect(url.startsWith(`${as.issuer}/`)).toBe(true);
    const page = await fetch(await browseToCallback(url, callback));
    const text = await page.text();
    seen.push(text);
    expect(page.status, text).toBe(200);
  }

  /** An agent using `serverId`; the model calls `whoami` once (unless `calls` is false), then says `reply`. */
  async function agent(serverId: string, reply: string, fields: Record<string, unknown> = {}, calls = true) {
    fx.vendor.script(...(calls ? [{ reply: { tool_calls: [{ name: 'whoami', arguments: {} }] } }] : []), {
      reply: { text: reply },
    });
    return fx.agent({ mcp_servers: [{ mcp_server_id: serverId }], ...fields });
  }

  async function converse(agentId: string): Promise<Run> {
    const res = await fx.converse({ agent_id: agentId, message: 'who am I?' });
    seen.push(res.text);
    expect(res.status, res.text).toBe(200);
    return res.body.data as unknown as Run;
  }

  it('pauses at the listing with the URL; authorized after a worker restart, the run lists, calls and completes', async () => {
    const server = await mcpServer('/mcp');
    const a = await agent(server.id, 'you are alice');
    const first = await converse(a.id);
    const waiting = await until(first.run_id, 'awaiting_authorization');
    expect(waiting.pause).toMatchObject({
      reason: 'authorization',
      details: { server_id: server.id, server_name: server.name, end_user_id: null },
    });
    expect(waiting.pause!.details).not.toHaveProperty('call_id');
    const url = String(waiting.pause!.details.authorization_url);
    expect((await events(first.run_id, 'run.paused')).map((e) => e.data)).toEqual([
      expect.objectContaining({ status: 'awaiting_authorization', reason: 'authorization' }),
    ]);
    // The model has not been asked yet: the turn waits before its first call.
    expect(fx.vendor.received).toHaveLength(0);

    // The worker that paused the run goes away; another one takes over.
    await stopWorker(worker.child);
    seen.push(worker.output());
    worker = await spawnWorker(fx.env);

    await authorizeAt(url);
    const done = await until(first.run_id, 'completed');
    expect(done.output?.content).toBe('you are alice');
    expect(done.pause).toBeNull();
    expect(done.tool_calls[0]).toMatchObject({ name: 'whoami', is_error: false });
    expect(done.tool_calls[0]!.output).toContain('hello alice');
    // Listed once authorized: the model's first request offers the server's tool.
    expect(JSON.stringify(fx.vendor.received[0]!.body)).toContain('whoami');
    expect(mcp.runs()).toBe(1);
    expect((await events(first.run_id, 'run.resumed')).map((e) => e.data)).toEqual([
      expect.objectContaining({ reason: 'authorization', by: 'user' }),
    ]);
  }, 60_000);

  /** A server at /stepup, authorized for `mcp:tools` only: it lists, but calls need `mcp:admin`. */
  async function stepUpServer() {
    const server = await mcpServer('/stepup', PRE);
    const started = await request<{ authorization_url: string }>(
      'POST',
      `/api/agent-server/mcp-servers/${server.id}/authorize`,
      {},
    );
    expect(started.status, started.text).toBe(200);
    await authorizeAt(started.body.data.authorization_url);
    return server;
  }

  it('pauses at a call that needs a wider scope; authorized, the call is made and the run completes', async () => {
    const server = await stepUpServer();
    const before = mcp.runs();
    const a = await agent(server.id, 'stepped up');
    const first = await converse(a.id);
    const waiting = await until(first.run_id, 'awaiting_authorization');
    expect(waiting.pause).toMatchObject({
      reason: 'authorization',
      details: { server_id: server.id, server_name: server.name },
    });
    expect(waiting.pause!.details.call_id).toBeTruthy();
    const url = new URL(String(waiting.pause!.details.authorization_url));
    // The scopes held and the one the server asked for; offline_access too, the authorization server offering it.
    expect(url.searchParams.get('scope')?.split(' ')).toEqual([SCOPE, ADMIN, 'offline_access']);

    await authorizeAt(url.href);
    const done = await until(first.run_id, 'completed');
    expect(done.output?.content).toBe('stepped up');
    expect(done.tool_calls).toHaveLength(1);
    expect(done.tool_calls[0]).toMatchObject({ id: waiting.pause!.details.call_id, is_error: false });
    expect(done.tool_calls[0]!.output).toContain('hello alice');
    // Refused once (403), then run once.
    expect(mcp.runs() - before).toBe(1);
    expect((await events(first.run_id, 'run.resumed')).map((e) => e.data)).toEqual([
      expect.objectContaining({ reason: 'authorization', by: 'user' }),
    ]);
  }, 30_000);

  it("goes on without the server's tools when authorization_timeout_ms passes at the listing", async () => {
    const server = await mcpServer('/mcp');
    const a = await agent(server.id, 'no tools today', { authorization_timeout_ms: 1_500 }, false);
    const first = await converse(a.id);
    const done = await until(first.run_id, 'completed', 15_000);
    expect(done.output?.content).toBe('no tools today');
    expect(done.warnings).toContain(
      `MCP server "${server.name}" was not authorized in time: its tools were not offered`,
    );
    // The model was offered none of the server's tools.
    expect(JSON.stringify(fx.vendor.received[0]!.body)).not.toContain('whoami');
    expect((await events(first.run_id, 'run.paused')).map((e) => e.data)).toEqual([
      expect.objectContaining({ reason: 'authorization' }),
    ]);
    expect((await events(first.run_id, 'run.resumed')).map((e) => e.data)).toEqual([
      expect.objectContaining({ reason: 'authorization', by: 'timeout' }),
    ]);
  }, 30_000);

  it('answers the call with an error when authorization_timeout_ms passes at a call', async () => {
    const server = await stepUpServer();
    const before = mcp.runs();
    const a = await agent(server.id, 'could not ask', { authorization_timeout_ms: 1_500 });
    const first = await converse(a.id);
    const done = await until(first.run_id, 'completed', 15_000);
    expect(done.output?.content).toBe('could not ask');
    expect(done.tool_calls[0]).toMatchObject({ name: 'whoami', is_error: true });
    const heard = done.tool_calls[0]!.output!;
    expect(heard).toContain(`MCP server "${server.name}" was not authorized`);
    // The model's next request carries that error as the tool's result.
    expect(JSON.stringify(fx.vendor.received.at(-1)!.body)).toContain('was not authorized');
    expect(mcp.runs()).toBe(before);
  }, 30_000);

  it('never shows a token: not in API answers, logs, or stored spans', async () => {
    const tokens = [...new Set([...as.issued, ...mcp.bearers])];
    // Every token the MCP server was shown is one the hook on the token endpoint caught.
    expect(mcp.bearers.length).toBeGreaterThan(0);
    expect(as.issued).toEqual(expect.arrayContaining([...new Set(mcp.bearers)]));
    // Spans are written in batches: the worker flushes on shutdown, the API every 200 ms.
    await stopWorker(worker.child);
    seen.push(worker.output());
    await new Promise((r) => setTimeout(r, 1_000));
    const spans: Array<{ service_name: string; text: string }> = await db('spans')
      .where('start_time', '>=', started)
      .select(
        'service_name',
        db.raw(
          "concat_ws(' ', name, status_message, attributes::text, events::text) as text",
        ) as unknown as string,
      );
    // The API's spans and the workers' (which list and call the server) alike.
    expect(new Set(spans.map((s) => s.service_name)).size).toBeGreaterThanOrEqual(2);
    const everywhere = [...seen, fx.api.logs.text, ...spans.map((s) => s.text)].join('\n');
    // The checks above did look at what they searched: the run's URLs are in there.
    expect(everywhere).toContain(as.issuer);
    for (const token of tokens) expect(everywhere.includes(token), 'a token leaked').toBe(false);
  }, 30_000);
});
