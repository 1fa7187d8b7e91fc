/**
 * A2A push notifications through the official `@a2a-js/sdk` client against
 * the real stack: a push config set on a task, or given with SendMessage,
 * receives the task (A2A's StreamResponse `{task}`) when it waits and when it
 * ends, with the client's token and Authorization; a receiver that fails
 * first gets it on a retry; a config deleted gets nothing more.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { SendMessageRequest, TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEverythingServer, type RunningMcp } from '../../../fixtures/mcp-servers.js';
import { noTemporal } from '../../../helpers/services.js';
import { useSessionWorld, waitFor } from '../../sessions/session-harness.js';

interface Push {
  path: string;
  headers: IncomingHttpHeaders;
  body: { task?: { id: string; status: { state: string }; artifacts?: unknown[] } };
}

/** A local receiver: records every push, answers each path from its queue of statuses (then 200). */
class Receiver {
  readonly received: Push[] = [];
  readonly statuses = new Map<string, number[]>();
  private server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      this.received.push({
        path,
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString()) as Push['body'],
      });
      res.writeHead(this.statuses.get(path)?.shift() ?? 200).end();
    });
  });
  async start(): Promise<void> {
    this.server.listen(0, '127.0.0.1');
    await new Promise((r) => this.server.once('listening', r));
  }
  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }
  at(path: string): Push[] {
    return this.received.filter((r) => r.path === path);
  }
  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

const send = (text: string, message: Record<string, unknown> = {}, configuration?: object) =>
  SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...message },
    ...(configuration ? { configuration } : {}),
  });

const asTask = (r: unknown): Task => r as Task;

describe.skipIf(noTemporal())('A2A push notifications (webhook deliveries)', () => {
  const world = useSessionWorld({
    WEBHOOK_RETRY_INITIAL_MS: '200',
    WEBHOOK_RETRY_MAX_MS: '400',
    WEBHOOK_EXPIRE_MS: '4000',
    WEBHOOK_TIMEOUT_MS: '2000',
  });
  const receiver = new Receiver();
  let everything: RunningMcp;
  let base: string;
  let agentId: string;
  let client: Client;

  const rpc = async (method: string, params: unknown) => {
    const res = await fetch(`${base}${agentId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
  };

  beforeAll(async () => {
    await receiver.start();
    everything = await startEverythingServer('streamableHttp');
    base = `${world.fx.api.url}/api/a2a/`;
    agentId = (await world.fx.agent({ expose: { a2a: true } })).id;
    client = await new ClientFactory().createFromUrl(`${base}${agentId}/`);
  }, 60_000);
  afterAll(async () => {
    await receiver.close();
    await everything?.stop();
  });

  it('declares push notifications on the card', async () => {
    const card = (await (await fetch(`${base}${agentId}/.well-known/agent-card.json`)).json()) as {
      capabilities: { pushNotifications: boolean };
    };
    expect(card.capabilities.pushNotifications).toBe(true);
  });

  it('a config given with SendMessage gets the completed task with its token and Authorization, retried after a failure', async () => {
    receiver.statuses.set('/given', [503]);
    world.fx.vendor.script({ reply: { text: 'Pushed answer.' } });
    const task = asTask(
      await client.sendMessage(
        send(
          'Hi',
          {},
          {
            taskPushNotificationConfig: {
              url: receiver.url('/given'),
              token: 'tok-given',
              authentication: { scheme: 'Bearer', credentials: 'cred-given' },
            },
          },
        ),
      ),
    );
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const pushes = await waitFor(() =>
      receiver.at('/given').length >= 2 ? receiver.at('/given') : undefined,
    );
    // The same body again: the first answered 503, the retry 200.
    expect(pushes).toHaveLength(2);
    for (const p of pushes) {
      expect(p.headers['x-a2a-notification-token']).toBe('tok-given');
      expect(p.headers.authorization).toBe('Bearer cred-given');
      expect(p.headers['content-type']).toBe('application/a2a+json');
      expect(p.body.task).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_COMPLETED' } });
    }
    const configs = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    expect(configs.configs).toHaveLength(1);
    expect(configs.configs[0]).toMatchObject({ url: receiver.url('/given'), token: 'tok-given' });
    // Credentials are never answered back.
    expect(configs.configs[0]!.authentication).toEqual({ scheme: 'Bearer', credentials: '' });
  });

  it('a config set on a waiting task: the approval pause, then the completion once approved', async () => {
    const server = await world.fx.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${world.fx.projectId}`,
      { name: `mcp-${randomUUID().slice(0, 8)}`, endpoint: everything.url },
    );
    const agent = await world.fx.agent({
      expose: { a2a: true },
      mcp_servers: [
        { mcp_server_id: server.body.data.id, tool_filters: ['echo'], tools_requiring_approval: ['echo'] },
      ],
    });
    const tools = await new ClientFactory().createFromUrl(`${base}${agent.id}/`);
    world.fx.vendor.script(
      { reply: { tool_calls: [{ name: 'echo', arguments: { message: 'words' } }] } },
      { reply: { text: 'echoed' } },
    );
    const paused = asTask(
      await tools.sendMessage(
        send('echo please', {}, { taskPushNotificationConfig: { url: receiver.url('/pause'), token: 't1' } }),
      ),
    );
    expect(paused.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const pause = await waitFor(() => receiver.at('/pause')[0]);
    expect(pause.body.task).toMatchObject({ id: paused.id, status: { state: 'TASK_STATE_INPUT_REQUIRED' } });
    expect(pause.headers['x-a2a-notification-token']).toBe('t1');
    expect(pause.headers.authorization).toBeUndefined();

    const set = await tools.createTaskPushNotificationConfig({
      tenant: '',
      id: 'mine',
      taskId: paused.id,
      url: receiver.url('/set'),
      token: 't2',
      authentication: { scheme: 'Basic', credentials: 'dXNlcjpwYXNz' },
    });
    expect(set).toMatchObject({ id: 'mine', taskId: paused.id, url: receiver.url('/set') });
    expect(
      await tools.getTaskPushNotificationConfig({ tenant: '', taskId: paused.id, id: 'mine' }),
    ).toMatchObject({
      id: 'mine',
      token: 't2',
    });
    await tools.sendMessage(send('approve', { taskId: paused.id }));
    const done = await waitFor(() => receiver.at('/set')[0]);
    expect(done.headers.authorization).toBe('Basic dXNlcjpwYXNz');
    expect(done.headers['x-a2a-notification-token']).toBe('t2');
    expect(done.body.task).toMatchObject({ id: paused.id, status: { state: 'TASK_STATE_COMPLETED' } });
    const both = await waitFor(() =>
      receiver.at('/pause').length === 2 ? receiver.at('/pause') : undefined,
    );
    expect(both[1]!.body.task!.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('bad configs are InvalidParams naming the field; a task of another agent is TaskNotFound; delete works', async () => {
    world.fx.vendor.script({ reply: { text: 'ok' } });
    const task = asTask(await client.sendMessage(send('Hi')));
    const bad = await rpc('CreateTaskPushNotificationConfig', { taskId: task.id, url: 'ftp://x.test/hook' });
    expect(bad.error).toMatchObject({ code: -32602, message: /url/ });
    const badGiven = await rpc('SendMessage', {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'x' }] },
      configuration: { taskPushNotificationConfig: { url: 'not a url' } },
    });
    expect(badGiven.error).toMatchObject({
      code: -32602,
      message: /configuration\.taskPushNotificationConfig\.url/,
    });
    const other = await rpc('CreateTaskPushNotificationConfig', {
      taskId: randomUUID(),
      url: receiver.url('/x'),
    });
    expect(other.error).toMatchObject({ code: -32001 });

    const made = await client.createTaskPushNotificationConfig({
      tenant: '',
      id: '',
      taskId: task.id,
      url: receiver.url('/x'),
      token: '',
      authentication: undefined,
    });
    expect(made.id).toMatch(/^[0-9a-f-]{36}$/);
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: made.id });
    const gone = await rpc('GetTaskPushNotificationConfig', { taskId: task.id, id: made.id });
    expect(gone.error).toMatchObject({ code: -32602 });
  });

  it('deleting a config stops its pending deliveries', async () => {
    receiver.statuses.set(
      '/down',
      Array.from({ length: 50 }, () => 503),
    );
    world.fx.vendor.script({ reply: { text: 'nobody hears' } });
    const task = asTask(
      await client.sendMessage(
        send('Hi', {}, { taskPushNotificationConfig: { id: 'down', url: receiver.url('/down') } }),
      ),
    );
    await waitFor(() => receiver.at('/down')[0]);
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'down' });
    await new Promise((r) => setTimeout(r, 300));
    const after = receiver.at('/down').length;
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.at('/down').length).toBe(after);
  });
});
