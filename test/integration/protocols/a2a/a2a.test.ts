/**
 * Agents as A2A v1.0 agents, driven by the official `@a2a-js/sdk` client
 * against the real stack (Temporal, a worker, Postgres) with the scripted
 * vendor: a task is a run, its contextId the conversation; an approval pause
 * is INPUT_REQUIRED answered by the next SendMessage on the task.
 */
import { randomUUID } from 'node:crypto';
import { SendMessageRequest, TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAskingMcpServer,
  startEverythingServer,
  type RunningMcp,
} from '../../../fixtures/mcp-servers.js';
import { startTestApi, type TestApi } from '../../../helpers/api.js';
import { uniqueName } from '../../../helpers/factories.js';
import { sentMessages, useSessionWorld } from '../../sessions/session-harness.js';

type Part = Record<string, unknown>;

/** A SendMessage request as a client writes it on the wire. */
function send(parts: Part[] | string, message: Record<string, unknown> = {}, configuration?: object) {
  return SendMessageRequest.fromJSON({
    message: {
      messageId: randomUUID(),
      role: 'ROLE_USER',
      parts: typeof parts === 'string' ? [{ text: parts }] : parts,
      ...message,
    },
    ...(configuration ? { configuration } : {}),
  });
}

const textOf = (m: Message | undefined) =>
  (m?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

const answerOf = (t: Task) =>
  (t.artifacts[0]?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

const asTask = (r: Awaited<ReturnType<Client['sendMessage']>>): Task => {
  if (!('id' in r) || !('status' in r)) throw new Error('expected a task');
  return r;
};

describe('A2A: agents as A2A agents through the official client', () => {
  const world = useSessionWorld();
  let agentId: string;
  let client: Client;
  let base: string;

  const rpc = async (method: string, params: unknown, headers: Record<string, string> = {}, id = 1) => {
    const res = await fetch(`${base}${agentId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    base = `${world.fx.api.url}/api/a2a/`;
    agentId = (await world.fx.agent({ description: 'Answers questions', expose: { a2a: true } })).id;
    client = await new ClientFactory().createFromUrl(`${base}${agentId}/`);
  });

  it('serves a public card: name, description, skill, streaming, one JSON-RPC interface; 404 when not exposed', async () => {
    const res = await fetch(`${base}${agentId}/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
    const card = (await res.json()) as Record<string, unknown>;
    expect(card).toMatchObject({
      description: 'Answers questions',
      capabilities: { streaming: true, pushNotifications: true },
      supportedInterfaces: [{ url: `${base}${agentId}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      skills: [{ description: 'Answers questions' }],
    });
    // No ADMIN_TOKEN on this server: nothing to authenticate with.
    expect(card.securitySchemes ?? {}).toEqual({});
    const closed = (await world.fx.agent()).id;
    for (const id of [closed, randomUUID(), 'not-an-id']) {
      const r = await fetch(`${base}${id}/.well-known/agent-card.json`);
      expect(r.status).toBe(404);
      expect(((await r.json()) as { error: { code: number } }).error.code).toBe(-32600);
    }
    const method = await rpc('GetTask', { id: randomUUID() }, {}, 7);
    expect(method.status).toBe(200);
    const other = await fetch(`${base}${closed}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: randomUUID() } }),
    });
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
  });

  it('SendMessage: a run of the agent (source a2a); the next message in its contextId continues the conversation', async () => {
    world.fx.vendor.script(
      { reply: { text: 'Paris is the capital.' } },
      { reply: { text: 'About 2 million.' } },
    );
    const first = asTask(await client.sendMessage(send('Capital of France?')));
    expect(first.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerOf(first)).toBe('Paris is the capital.');
    expect(first.history.map((m) => textOf(m))).toEqual(['Capital of France?', 'Paris is the capital.']);
    const run = await world.fx.api.request<{ source: string; status: string; conversation_id: string }>(
      'GET',
      `/api/agent-server/runs/${first.id}`,
    );
    expect(run.body.data).toMatchObject({
      source: 'a2a',
      status: 'completed',
      conversation_id: first.contextId,
    });

    const second = asTask(
      await client.sendMessage(send('How many people live there?', { contextId: first.contextId })),
    );
    expect(second.contextId).toBe(first.contextId);
    expect(answerOf(second)).toBe('About 2 million.');
    const seen = sentMessages(world.fx.vendor, 1).map((m) => m.content);
    expect(seen).toContain('Capital of France?');
    expect(seen).toContain('Paris is the capital.');

    const got = await client.getTask({ tenant: '', id: first.id, historyLength: 1 });
    expect(got.history.map((m) => textOf(m))).toEqual(['Paris is the capital.']);
    const listed = await client.listTasks({
      tenant: '',
      contextId: first.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 1,
      pageToken: '',
      statusTimestampAfter: undefined,
    });
    expect(listed.totalSize).toBe(2);
    expect(listed.tasks.map((t) => t.id)).toEqual([second.id]);
    const page2 = await client.listTasks({
      tenant: '',
      contextId: first.contextId,
      status: TaskState.TASK_STATE_COMPLETED,
      pageSize: 1,
      pageToken: listed.nextPageToken,
      statusTimestampAfter: undefined,
    });
    expect(page2.tasks.map((t) => t.id)).toEqual([first.id]);
    expect(page2.nextPageToken).toBe('');
    // statusTimestampAfter: the tasks whose status timestamp (finished, else started, else created) is later.
    const later = await client.listTasks({
      tenant: '',
      contextId: first.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 10,
      pageToken: '',
      // The timestamp answered is to the millisecond; the stored one finer.
      statusTimestampAfter: new Date(Date.parse(first.status!.timestamp!) + 1).toISOString(),
    });
    expect(later.tasks.map((t) => t.id)).toEqual([second.id]);
    expect(later.totalSize).toBe(1);
    const badTime = await rpc('ListTasks', { statusTimestampAfter: 'yesterday' });
    expect(badTime.body).toMatchObject({ error: { code: -32602, message: /statusTimestampAfter/ } });
  });

  it('SendStreamingMessage: the task, its answer as artifact chunks, then COMPLETED with the whole answer', async () => {
    world.fx.vendor.script({ reply: { text: 'one two three four five' }, chunkDelayMs: 20 });
    const events: StreamResponse[] = [];
    for await (const ev of client.sendMessageStream(send('count'))) events.push(ev);
    const kinds = events.map((e) => e.payload!.$case);
    expect(kinds[0]).toBe('task');
    const chunks = events.flatMap((e) =>
      e.payload?.$case === 'artifactUpdate' && !e.payload.value.lastChunk ? [e.payload.value] : [],
    );
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((c) => textOf(c.artifact as unknown as Message)).join('')).toBe(
      'one two three four five',
    );
    const last = events.at(-1)!.payload!;
    expect(last.$case).toBe('statusUpdate');
    if (last.$case === 'statusUpdate') expect(last.value.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const final = events.find(
      (e) => e.payload?.$case === 'artifactUpdate' && e.payload.value.lastChunk,
    )?.payload;
    expect(final?.$case === 'artifactUpdate' && textOf(final.value.artifact as unknown as Message)).toBe(
      'one two three four five',
    );
  });

  it('SubscribeToTask after a disconnect: the task as it stands, then the rest of the run until it completes', async () => {
    world.fx.vendor.script({
      reply: { text: 'alpha beta gamma delta epsilon zeta eta theta' },
      chunkDelayMs: 150,
    });
    const leave = new AbortController();
    let taskId = '';
    await expect(
      (async () => {
        for await (const ev of client.sendMessageStream(send('greek'), { signal: leave.signal })) {
          if (ev.payload?.$case === 'task') taskId = ev.payload.value.id;
          if (ev.payload?.$case === 'artifactUpdate') leave.abort();
        }
      })(),
    ).rejects.toThrow();
    expect(taskId).not.toBe('');
    const events: StreamResponse[] = [];
    for await (const ev of client.resubscribeTask({ tenant: '', id: taskId })) events.push(ev);
    const first = events[0]!.payload!;
    expect(first.$case === 'task' && first.value.status!.state).toBe(TaskState.TASK_STATE_WORKING);
    const last = events.at(-1)!.payload!;
    expect(last.$case === 'statusUpdate' && last.value.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const task = await client.getTask({ tenant: '', id: taskId });
    expect(answerOf(task)).toBe('alpha beta gamma delta epsilon zeta eta theta');
    // An ended task has nothing to follow: the protocol's error, read with GetTask instead.
    await expect(
      (async () => {
        for await (const _ of client.resubscribeTask({ tenant: '', id: taskId })) void _;
      })(),
    ).rejects.toThrow(/ended/);
  });

  it('CancelTask: a working task ends CANCELED; cancelling it again is TaskNotCancelable', async () => {
    // A polling client: SendMessage answers at once (returnImmediately) with the task still working.
    const polling = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { clientConfig: { polling: true } }),
    ).createFromUrl(`${base}${agentId}/`);
    world.fx.vendor.script({ reply: { text: 'never finished' }, hold: true });
    try {
      const started = asTask(await polling.sendMessage(send('take your time')));
      expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(started.status!.state);
      await world.fx.vendor.whenHeld();
      const cancelled = await polling.cancelTask({ tenant: '', id: started.id, metadata: undefined });
      expect(cancelled.status!.state).toBe(TaskState.TASK_STATE_CANCELED);
      await expect(
        polling.cancelTask({ tenant: '', id: started.id, metadata: undefined }),
      ).resolves.toMatchObject({
        id: started.id,
      });
    } finally {
      world.fx.vendor.release();
    }
    world.fx.vendor.script({ reply: { text: 'done quickly' } });
    const done = asTask(await client.sendMessage(send('quick one')));
    await expect(client.cancelTask({ tenant: '', id: done.id, metadata: undefined })).rejects.toThrow(
      /cancel/i,
    );
  });

  describe('an approval pause is INPUT_REQUIRED', () => {
    let everything: RunningMcp;
    beforeAll(async () => {
      everything = await startEverythingServer('streamableHttp');
    }, 60_000);
    afterAll(async () => {
      await everything?.stop();
    });

    it('the next SendMessage on the task answers it; a wrong answer is InvalidParams and decides nothing', async () => {
      const server = await world.fx.api.request<{ id: string }>(
        'POST',
        `/api/agent-server/mcp-servers?project_id=${world.fx.projectId}`,
        { name: uniqueName('mcp'), endpoint: everything.url },
      );
      const agent = await world.fx.agent({
        expose: { a2a: true },
        mcp_servers: [
          { mcp_server_id: server.body.data.id, tool_filters: ['echo'], tools_requiring_approval: ['echo'] },
        ],
      });
      const tools = await new ClientFactory().createFromUrl(`${base}${agent.id}/`);
      world.fx.vendor.script(
        { reply: { tool_calls: [{ name: 'echo', arguments: { message: 'approved words' } }] } },
        { reply: { text: 'echoed it' } },
      );
      const paused = asTask(await tools.sendMessage(send('echo please')));
      expect(paused.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const data = paused.status!.message!.parts.find((p) => p.content?.$case === 'data')!.content!;
      expect(data.$case === 'data' && data.value).toMatchObject({
        reason: 'approval',
        details: { pending: [{ name: 'echo' }] },
      });

      await expect(tools.sendMessage(send('maybe', { taskId: paused.id }))).rejects.toThrow(/approve/);
      expect(asTask(await tools.getTask({ tenant: '', id: paused.id })).status!.state).toBe(
        TaskState.TASK_STATE_INPUT_REQUIRED,
      );

      const done = asTask(
        await tools.sendMessage(
          send([{ data: { approved: true } }], { taskId: paused.id, contextId: paused.contextId }),
        ),
      );
      expect(done.id).toBe(paused.id);
      expect(done.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(answerOf(done)).toBe('echoed it');
      await expect(tools.sendMessage(send('again', { taskId: paused.id }))).rejects.toThrow(/ended/);
    });
  });

  describe("an MCP server's question is INPUT_REQUIRED", () => {
    let asking: Awaited<ReturnType<typeof startAskingMcpServer>>;
    beforeAll(async () => {
      asking = await startAskingMcpServer();
    });
    afterAll(async () => {
      await asking?.stop();
    });

    it('streamed: the stream ends on the question; a streamed answer on the task goes on to COMPLETED', async () => {
      const server = await world.fx.api.request<{ id: string }>(
        'POST',
        `/api/agent-server/mcp-servers?project_id=${world.fx.projectId}`,
        { name: uniqueName('asking'), endpoint: asking.url },
      );
      const agent = await world.fx.agent({
        expose: { a2a: true },
        mcp_servers: [{ mcp_server_id: server.body.data.id }],
      });
      const booking = await new ClientFactory().createFromUrl(`${base}${agent.id}/`);
      world.fx.vendor.script(
        { reply: { tool_calls: [{ name: 'book_seat', arguments: {} }] } },
        { reply: { text: 'booked' } },
      );
      const first: StreamResponse[] = [];
      for await (const ev of booking.sendMessageStream(send('book me a seat'))) first.push(ev);
      const task = first[0]!.payload!;
      if (task.$case !== 'task') throw new Error('the stream starts with the task');
      const waiting = first.at(-1)!.payload!;
      if (waiting.$case !== 'statusUpdate') throw new Error('the stream ends with a status');
      expect(waiting.value.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const question = waiting.value.status!.message!.parts.find(
        (p) => p.content?.$case === 'data',
      )!.content!;
      expect(question.$case === 'data' && question.value).toMatchObject({
        reason: 'input',
        details: { message: 'Which seat would you like?', requested_schema: { required: ['seat'] } },
      });

      const second: StreamResponse[] = [];
      for await (const ev of booking.sendMessageStream(
        send([{ data: { action: 'accept', content: { seat: '12A' } } }], { taskId: task.value.id }),
      ))
        second.push(ev);
      // The task as it stands once answered (it may have completed already), then its updates to the end.
      const done = second.at(-1)!.payload!;
      const state =
        done.$case === 'statusUpdate' || done.$case === 'task' ? done.value.status!.state : undefined;
      expect(state).toBe(TaskState.TASK_STATE_COMPLETED);
      const final = await booking.getTask({ tenant: '', id: task.value.id });
      expect(answerOf(final)).toBe('booked');
      expect(asking.heard.at(-1)).toMatchObject({ action: 'accept', content: { seat: '12A' } });
    });
  });

  it('bad input answers JSON-RPC errors, never a 500', async () => {
    const notFound = await rpc('GetTask', { id: randomUUID() });
    expect(notFound.body).toMatchObject({ id: 1, error: { code: -32001 } });
    expect((await rpc('GetTask', { id: 'x' })).body).toMatchObject({ error: { code: -32001 } });
    expect((await rpc('Telepathy', {})).body).toMatchObject({ error: { code: -32601 } });
    expect((await rpc('SendMessage', {})).body).toMatchObject({
      error: { code: -32602, message: /message/ },
    });
    const noParts = await rpc('SendMessage', { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [] } });
    expect(noParts.body).toMatchObject({ error: { code: -32602, message: /message\.parts/ } });
    const badContext = await rpc('SendMessage', {
      message: { messageId: 'm-2', role: 'ROLE_USER', parts: [{ text: 'x' }], contextId: 'a b' },
    });
    expect(badContext.body).toMatchObject({ error: { code: -32602, message: /contextId/ } });
    const pdf = await rpc('SendMessage', {
      message: {
        messageId: 'm-3',
        role: 'ROLE_USER',
        parts: [{ url: 'https://x.test/a.pdf', mediaType: 'application/pdf' }],
      },
    });
    expect(pdf.body).toMatchObject({ error: { code: -32005 } });
    const push = await rpc('CreateTaskPushNotificationConfig', {
      taskId: randomUUID(),
      url: 'https://x.test/hook',
    });
    expect(push.body).toMatchObject({ error: { code: -32001 } });
    const version = await rpc('GetTask', { id: randomUUID() }, { 'a2a-version': '' });
    expect(version.body).toMatchObject({ error: { code: -32009 } });
    const badPage = await rpc('ListTasks', { pageSize: 1000 });
    expect(badPage.body).toMatchObject({ error: { code: -32602, message: /pageSize/ } });
    const malformed = await fetch(`${base}${agentId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: '{"jsonrpc":',
    });
    expect(malformed.status).toBeLessThan(500);
    expect(await malformed.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    // A browser page of another origin cannot call the door (no CORS for it).
    const crossSite = await rpc('GetTask', { id: randomUUID() }, { origin: 'https://elsewhere.test' });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    // Another agent's task is not this agent's.
    const other = (await world.fx.agent({ expose: { a2a: true } })).id;
    world.fx.vendor.script({ reply: { text: 'mine' } });
    const mine = asTask(await client.sendMessage(send('hello')));
    const foreign = await fetch(`${base}${other}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: mine.id } }),
    });
    expect(await foreign.json()).toMatchObject({ error: { code: -32001 } });
  });

  describe('with ADMIN_TOKEN', () => {
    const TOKEN = 'a2a-door-token-0123456789';
    let guarded: TestApi;
    beforeAll(async () => {
      guarded = await startTestApi({ ...world.fx.env, ADMIN_TOKEN: TOKEN });
    });
    afterAll(async () => {
      await guarded?.close();
    });

    it('the card stays public and declares the bearer scheme; methods need the token', async () => {
      const url = `${guarded.url}/api/a2a/${agentId}`;
      const card = (await (await fetch(`${url}/.well-known/agent-card.json`)).json()) as Record<
        string,
        unknown
      >;
      expect(card.securitySchemes).toEqual({
        bearer: {
          httpAuthSecurityScheme: {
            scheme: 'Bearer',
            description: 'An API token of this server (or, open mode, its ADMIN_TOKEN)',
          },
        },
      });
      expect(card.securityRequirements).toEqual([{ schemes: { bearer: {} } }]);
      const refused = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: randomUUID() } }),
      });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
      const anonymous = await new ClientFactory().createFromUrl(`${url}/`);
      await expect(anonymous.getTask({ tenant: '', id: randomUUID() })).rejects.toThrow(/Unauthorized/);

      const authed: typeof fetch = (input, init) =>
        fetch(input, {
          ...init,
          headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${TOKEN}` },
        });
      const withToken = await new ClientFactory({
        transports: [new JsonRpcTransportFactory({ fetchImpl: authed })],
      }).createFromUrl(`${url}/`);
      await expect(withToken.getTask({ tenant: '', id: randomUUID() })).rejects.toThrow(/Task not found/);
    });
  });
});
