/**
 * AUTH_REQUIRED over A2A, on the real stack: an agent exposed as an A2A
 * agent uses an MCP server that admits only tokens of a real authorization
 * server (oidc-provider). The official `@a2a-js/sdk` client's task waits
 * AUTH_REQUIRED with the URL to open in its status message; a SendMessage on
 * the task before anyone authorized answers it as it stands (the same URL, no
 * new run, the run not woken); a bad one is a JSON-RPC error. Once the person
 * has authorized (the browser played up to our callback), the caller's next
 * SendMessage and its SubscribeToTask follow the same task to COMPLETED with
 * the tool's answer. A URL that expired unused: the message wakes the run,
 * which asks again with a fresh URL.
 */
import { randomUUID } from 'node:crypto';
import { SendMessageRequest, TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../../core/db/knex.js';
import { hashState } from '../../../../core/mcp/oauth/index.js';
import {
  browseToCallback,
  closeServer,
  startAuthorizationServer,
  startProtectedMcp,
  type AuthorizationServer,
  type ProtectedMcp,
} from '../../../fixtures/oauth-servers.js';
import { uniqueName } from '../../../helpers/factories.js';
import { freePort } from '../../../helpers/ports.js';
import { databaseUrl, noTemporal } from '../../../helpers/services.js';
import {
  sessionEnv,
  startFixture,
  startInProcessWorker,
  waitFor,
  type Fixture,
} from '../../sessions/session-harness.js';

const send = (text: string, message: Record<string, unknown> = {}, configuration?: object) =>
  SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...message },
    ...(configuration ? { configuration } : {}),
  });

const asTask = (r: Awaited<ReturnType<Client['sendMessage']>>): Task => {
  if (!('id' in r) || !('status' in r)) throw new Error('expected a task');
  return r;
};

const textOf = (m: Message | undefined) =>
  (m?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

const answerOf = (t: Task) =>
  (t.artifacts[0]?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

/** The wait's data part in the task's status message: `{reason, details, answer}`. */
function waitOf(t: Task): { reason: string; details: Record<string, unknown>; answer: unknown } {
  const data = t.status?.message?.parts.find((p) => p.content?.$case === 'data')?.content;
  if (data?.$case !== 'data') throw new Error('the status message has no data part');
  return data.value as { reason: string; details: Record<string, unknown>; answer: unknown };
}

const stateOf = (ev: StreamResponse | undefined): TaskState | undefined => {
  const p = ev?.payload;
  if (p?.$case === 'task') return p.value.status?.state;
  if (p?.$case === 'statusUpdate') return p.value.status?.state;
  return undefined;
};

async function drain(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const ev of stream) events.push(ev);
  return events;
}

describe.skipIf(noTemporal())('A2A: a task waiting for an MCP server’s authorization (AUTH_REQUIRED)', () => {
  let fx: Fixture;
  let db: Db;
  let as: AuthorizationServer;
  let mcp: ProtectedMcp;
  let worker: Awaited<ReturnType<typeof startInProcessWorker>>;
  let callback: string;
  let base: string;
  /** Every A2A answer (the SDK client's and raw ones): looked through for tokens at the end. */
  const seen: string[] = [];

  /** The official client, keeping a copy of every answer; `polling`: SendMessage answers at once (returnImmediately). */
  function a2aClient(agentId: string, polling = false): Promise<Client> {
    const fetchImpl: typeof fetch = async (url, init) => {
      const res = await fetch(url, init);
      res
        .clone()
        .text()
        .then((text) => seen.push(text))
        .catch(() => undefined);
      return res;
    };
    return new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        clientConfig: { polling },
      }),
    ).createFromUrl(`${base}${agentId}/`);
  }

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
    const env = sessionEnv({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` });
    fx = await startFixture(env);
    worker = await startInProcessWorker(env);
    db = createDb(databaseUrl());
    base = `${fx.api.url}/api/a2a/`;
  }, 90_000);
  afterAll(async () => {
    await worker?.stop();
    await fx?.close();
    await db?.destroy();
    if (mcp) await closeServer(mcp.server);
    if (as) await closeServer(as.server);
  });
  beforeEach(() => fx.vendor.reset());

  /** An agent exposed over A2A using a fresh server at the protected MCP server's /mcp (so nobody authorized it yet). */
  async function exposedAgent(): Promise<{ agentId: string; serverName: string; client: Client }> {
    const serverName = uniqueName('oauth');
    const server = await fx.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${fx.projectId}`,
      { name: serverName, endpoint: mcp.endpoint('/mcp') },
    );
    expect(server.status, server.text).toBe(200);
    const agent = await fx.agent({
      expose: { a2a: true },
      mcp_servers: [{ mcp_server_id: server.body.data.id }],
    });
    return {
      agentId: agent.id,
      serverName,
      client: await a2aClient(agent.id),
    };
  }

  /** A JSON-RPC request as any client may send it (no SDK checks in the way). */
  async function rpc(agentId: string, method: string, params: unknown) {
    const res = await fetch(`${base}${agentId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method, params }),
    });
    const text = await res.text();
    seen.push(text);
    return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
  }

  const runOf = async (runId: string) =>
    (
      await fx.api.request<{ status: string; tool_calls: Array<{ name: string; output?: string }> }>(
        'GET',
        `/api/agent-server/runs/${runId}`,
      )
    ).body.data;

  const eventCount = async (runId: string, type: 'run.paused' | 'run.resumed') => {
    const [row] = await db('run_events')
      .where({ run_id: runId, type })
      .count<Array<{ n: string }>>({ n: '*' });
    return Number(row?.n ?? 0);
  };

  it('says where to authorize; a message before that changes nothing; once authorized, the next message and SubscribeToTask follow the task to COMPLETED', async () => {
    const { agentId, serverName, client } = await exposedAgent();
    // The tool is called once authorized; the answer after it is held mid-way, so the task is seen working.
    fx.vendor.script(
      { reply: { tool_calls: [{ name: 'whoami', arguments: {} }] } },
      { reply: { text: 'you are alice' }, hold: true },
    );
    const waiting = asTask(await client.sendMessage(send('who am I?')));
    expect(waiting.status!.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
    const wait = waitOf(waiting);
    expect(wait).toMatchObject({ reason: 'authorization', details: { server_name: serverName } });
    const url = String(wait.details.authorization_url);
    expect(url.startsWith(`${as.issuer}/`)).toBe(true);
    // The words say it too, for a client (or person) that reads only text.
    const words = textOf(waiting.status!.message);
    expect(words).toContain(url);
    expect(words).toContain(serverName);
    expect(String(wait.answer)).toContain('authorization_url');
    // The model has not been asked: the turn waits before its first call.
    expect(fx.vendor.received).toHaveLength(0);
    const tried = mcp.seenAuthorization.length;

    // Before anyone authorized: the same task, still AUTH_REQUIRED with the same URL, answered at once.
    const early = Date.now();
    const still = asTask(
      await client.sendMessage(send('done', { taskId: waiting.id, contextId: waiting.contextId })),
    );
    expect(Date.now() - early).toBeLessThan(5_000);
    expect(still.id).toBe(waiting.id);
    expect(still.status!.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
    expect(waitOf(still).details.authorization_url).toBe(url);
    // Streamed alike: the task as it stands, and the stream ends.
    const streamed = await drain(client.sendMessageStream(send('done now?', { taskId: waiting.id })));
    expect(streamed).toHaveLength(1);
    expect(stateOf(streamed[0])).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
    // Not woken (the server was not asked again), and no new task in the context.
    expect(mcp.seenAuthorization.length).toBe(tried);
    expect(await eventCount(waiting.id, 'run.resumed')).toBe(0);
    const listed = await client.listTasks({
      tenant: '',
      contextId: waiting.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 10,
      pageToken: '',
      statusTimestampAfter: undefined,
    });
    expect(listed.tasks.map((t) => t.id)).toEqual([waiting.id]);

    // A bad message on the task: a JSON-RPC error (HTTP 200), never a 500, and the task is unchanged.
    const message = (fields: Record<string, unknown>) => ({
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'done' }], ...fields },
    });
    const wrongContext = await rpc(
      agentId,
      'SendMessage',
      message({ taskId: waiting.id, contextId: randomUUID() }),
    );
    expect(wrongContext.status).toBe(200);
    expect(wrongContext.body).not.toHaveProperty('result');
    expect(String((wrongContext.body.error as { message?: unknown }).message)).toContain('contextId');
    await expect(
      client.sendMessage(send('done', { taskId: waiting.id, contextId: randomUUID() })),
    ).rejects.toThrow(/contextId/);
    const unknownTask = await rpc(agentId, 'SendMessage', message({ taskId: randomUUID() }));
    expect(unknownTask.status).toBe(200);
    expect(unknownTask.body.error).toMatchObject({ code: -32001 });
    const agentRole = await rpc(agentId, 'SendMessage', message({ taskId: waiting.id, role: 'ROLE_AGENT' }));
    expect(agentRole.status).toBe(200);
    expect(String((agentRole.body.error as { message?: unknown }).message)).toContain('message.role');
    expect((await client.getTask({ tenant: '', id: waiting.id })).status!.state).toBe(
      TaskState.TASK_STATE_AUTH_REQUIRED,
    );

    // The person opens the URL, consents, and lands on our callback: that alone wakes the run.
    const page = await fetch(await browseToCallback(url, callback));
    expect(page.status, await page.text()).toBe(200);
    await fx.vendor.whenHeld();

    // The caller, told the person is done, follows the task: SubscribeToTask, and its next message on the task.
    const subscribed = client.resubscribeTask({ tenant: '', id: waiting.id });
    const subscribedFirst = await subscribed.next();
    expect(stateOf(subscribedFirst.value as StreamResponse)).toBe(TaskState.TASK_STATE_WORKING);
    const said = client.sendMessageStream(
      send('authorized', { taskId: waiting.id, contextId: waiting.contextId }),
    );
    const saidFirst = await said.next();
    const first = (saidFirst.value as StreamResponse).payload;
    expect(first?.$case === 'task' && first.value.id).toBe(waiting.id);
    expect(stateOf(saidFirst.value as StreamResponse)).toBe(TaskState.TASK_STATE_WORKING);
    const polling = await a2aClient(agentId, true);
    const polled = asTask(await polling.sendMessage(send('authorized', { taskId: waiting.id })));
    expect(polled.id).toBe(waiting.id);
    expect([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]).toContain(polled.status!.state);

    fx.vendor.release();
    const [afterSubscribe, afterSaid] = await Promise.all([drain(subscribed), drain(said)]);
    for (const events of [afterSubscribe, afterSaid])
      expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    const done = await client.getTask({ tenant: '', id: waiting.id });
    expect(done.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerOf(done)).toBe('you are alice');
    const run = await runOf(waiting.id);
    expect(run.tool_calls[0]).toMatchObject({ name: 'whoami' });
    expect(run.tool_calls[0]!.output).toContain('hello alice');
    // One task all along: the messages on it started nothing new.
    expect(await eventCount(waiting.id, 'run.resumed')).toBe(1);
    expect(
      (
        await client.listTasks({
          tenant: '',
          contextId: waiting.contextId,
          status: TaskState.TASK_STATE_UNSPECIFIED,
          pageSize: 10,
          pageToken: '',
          statusTimestampAfter: undefined,
        })
      ).tasks.map((t) => t.id),
    ).toEqual([waiting.id]);

    // Ended: a message on it is the protocol's refusal, saying where the answer is.
    await expect(client.sendMessage(send('authorized', { taskId: waiting.id }))).rejects.toThrow(/GetTask/);
    const ended = await rpc(agentId, 'SendMessage', message({ taskId: waiting.id }));
    expect(ended.status).toBe(200);
    expect(ended.body.error).toMatchObject({ code: -32004 });
  }, 60_000);

  it('a message after the URL expired unused wakes the run, which asks again with a fresh URL', async () => {
    const { client } = await exposedAgent();
    const waiting = asTask(await client.sendMessage(send('who am I?')));
    expect(waiting.status!.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
    const url = String(waitOf(waiting).details.authorization_url);
    // Ten minutes later, as far as the flow is concerned.
    const state = new URL(url).searchParams.get('state')!;
    await db.raw(`update mcp_oauth_flows set expires_at = now() - interval '1 minute' where state_hash = ?`, [
      hashState(state),
    ]);

    const again = asTask(await client.sendMessage(send('done', { taskId: waiting.id })));
    expect(again.id).toBe(waiting.id);
    expect(again.status!.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
    const fresh = String(waitOf(again).details.authorization_url);
    expect(fresh).not.toBe(url);
    expect(textOf(again.status!.message)).toContain(fresh);
    await waitFor(
      async () => ((await eventCount(waiting.id, 'run.paused')) === 2 ? true : undefined),
      10_000,
      'the run paused again',
    );
    expect(await eventCount(waiting.id, 'run.resumed')).toBe(1);
    await client.cancelTask({ tenant: '', id: waiting.id, metadata: undefined });
  }, 30_000);

  it('never shows a token in an A2A answer', () => {
    const tokens = [...new Set([...as.issued, ...mcp.bearers])];
    expect(tokens.length).toBeGreaterThan(0);
    const everything = seen.join('\n');
    for (const token of tokens) expect(everything.includes(token), 'a token leaked').toBe(false);
  });
});
