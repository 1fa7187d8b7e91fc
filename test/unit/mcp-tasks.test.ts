/**
 * The MCP tasks extension's client side (core/mcp/tasks.ts) against the
 * minimal 2026-07-28 tasks server: the extension declared per request on the
 * new revision, a call answered with a task surfaced as the task, tasks/get
 * and tasks/cancel sent with the Mcp-Name header the server checks; the
 * poll bounds and their configuration.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';
import {
  cancelTask,
  getTask,
  isCreatedTask,
  pollDelay,
  taskStarted,
  TaskAwareClient,
  type CreatedTask,
} from '../../core/mcp/tasks.js';
import { startTasksServer, type TasksServer } from '../fixtures/mcp-tasks-server.js';

describe('MCP tasks: the client side', () => {
  let server: TasksServer;
  let client: TaskAwareClient;
  beforeAll(async () => {
    server = await startTasksServer({ pollIntervalMs: 2_500 });
    client = new TaskAwareClient({ name: 'test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  });
  afterAll(async () => {
    await client?.close();
    await server?.stop();
  });

  it('declares the extension in each request of the new revision, not in the probe', () => {
    expect(client.getProtocolEra()).toBe('modern');
    expect(server.heard[0]).toMatchObject({ method: 'server/discover', declaredTasks: false });
  });

  it('surfaces a call answered with a task, then follows it to its result', async () => {
    const answer = await client.callTool({ name: 'slow_compute', arguments: { seconds: 0, label: 'now' } });
    expect(isCreatedTask(answer)).toBe(true);
    const task = answer as unknown as CreatedTask;
    expect(task).toMatchObject({ status: 'working', ttlMs: 60_000, pollIntervalMs: 2_500 });
    expect(taskStarted('srv', task, { minMs: 1_000, maxMs: 2_000 })).toEqual({
      kind: 'task',
      serverId: 'srv',
      taskId: task.taskId,
      status: 'working',
      pollIntervalMs: 2_000,
      ttlMs: 60_000,
      statusMessage: 'computing (0 of 0 s)',
    });
    const done = await getTask(client, task.taskId);
    expect(done).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'computed now in 0 s' }] },
    });
    expect(server.heard.filter((h) => h.method === 'tasks/get')).toEqual([
      { method: 'tasks/get', name: task.taskId, declaredTasks: true },
    ]);
  });

  it('a sync tool answers as usual', async () => {
    const answer = await client.callTool({ name: 'greet', arguments: { name: 'Ada' } });
    expect(isCreatedTask(answer)).toBe(false);
    expect(answer.content).toEqual([{ type: 'text', text: 'Hello, Ada!' }]);
  });

  it('cancels a task; the next tasks/get sees it cancelled', async () => {
    const task = (await client.callTool({
      name: 'slow_compute',
      arguments: { seconds: 60 },
    })) as unknown as CreatedTask;
    await cancelTask(client, task.taskId);
    expect((await getTask(client, task.taskId)).status).toBe('cancelled');
    await expect(getTask(client, 'no-such-task')).rejects.toMatchObject({ code: -32602 });
  });

  it("keeps the server's poll hint within the bounds", () => {
    const bounds = { minMs: 1_000, maxMs: 60_000 };
    expect(pollDelay(undefined, bounds)).toBe(1_000);
    expect(pollDelay(10, bounds)).toBe(1_000);
    expect(pollDelay(5_000, bounds)).toBe(5_000);
    expect(pollDelay(600_000, bounds)).toBe(60_000);
  });

  it('configures the bounds and the longest wait, refusing a maximum below the minimum', () => {
    expect(loadConfig({}).session).toMatchObject({
      mcpTaskPollMinMs: 1_000,
      mcpTaskPollMaxMs: 60_000,
      mcpTaskMaxMs: 86_400_000,
    });
    expect(() => loadConfig({ MCP_TASK_POLL_MIN_MS: '5000', MCP_TASK_POLL_MAX_MS: '1000' })).toThrowError(
      ConfigError,
    );
  });
});
