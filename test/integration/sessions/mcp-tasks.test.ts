/**
 * Long MCP tool calls run as tasks (the MCP tasks extension of the
 * 2026-07-28 revision): the server answers the call with a task, and the
 * session polls it (`tasks/get`) on durable timers until it is over; the
 * task's result reaches the model as any call's. A worker stopped or killed
 * mid-task loses nothing (the tool is called once), a cancelled run cancels the task
 * (`tasks/cancel`), a failed task and one that outlives its deadline are
 * error results. Real Temporal, Postgres, the scripted vendor, a minimal
 * server of the new revision (test/fixtures/mcp-tasks-server.ts).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTasksServer, type TasksServer } from '../../fixtures/mcp-tasks-server.js';
import { uniqueName } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import {
  killHard,
  readSse,
  sentMessages,
  sessionEnv,
  spawnWorker,
  startFixture,
  useSessionWorld,
  waitFor,
  type Fixture,
  type RunData,
  type SessionWorld,
} from './session-harness.js';

const base = '/api/agent-server';
/** Polls every 200 ms (the fixture hints 100 ms: below our bound). */
const FAST_POLLS = { MCP_TASK_POLL_MIN_MS: '200', MCP_TASK_POLL_MAX_MS: '500' };

function helpers(world: SessionWorld, mcp: () => TasksServer) {
  const api = () => world.fx.api;
  const run = async (id: string) => (await api().request<RunData>('GET', `${base}/runs/${id}`)).body.data;
  return {
    run,
    until: (id: string, status: string) =>
      waitFor(async () => ((await run(id)).status === status ? run(id) : undefined), 30_000, `run ${status}`),
    /** Starts a turn calling `tool` on a fresh server; `response` is converse's, once the run has ended. */
    async start(tool: string, args: Record<string, unknown>, reply: string) {
      const server = await api().request<{ id: string }>(
        'POST',
        `${base}/mcp-servers?project_id=${world.fx.projectId}`,
        {
          name: uniqueName('tasks'),
          endpoint: mcp().url,
        },
      );
      expect(server.status).toBe(200);
      world.fx.vendor.script(
        { reply: { tool_calls: [{ name: tool, arguments: args }] } },
        { reply: { text: reply } },
      );
      const agent = await world.fx.agent({ mcp_servers: [{ mcp_server_id: server.body.data.id }] });
      return { agentId: agent.id, response: world.fx.converse({ agent_id: agent.id, message: 'go' }) };
    },
    /** A turn that ran to its end. */
    async turn(tool: string, args: Record<string, unknown>, reply: string): Promise<RunData> {
      const res = await (await this.start(tool, args, reply)).response;
      expect(res.status).toBe(200);
      return res.body.data;
    },
    /** Resolves once the fixture holds a task that has been polled at least once. */
    async taskPolled(): Promise<string> {
      return waitFor(
        () => {
          const task = [...mcp().tasks.values()].at(-1);
          const polled = task && mcp().heard.some((h) => h.method === 'tasks/get' && h.name === task.taskId);
          return polled ? task.taskId : undefined;
        },
        20_000,
        'a polled task',
      );
    },
    /** The agent's run (its converse has not answered yet). */
    async runOf(agentId: string): Promise<RunData> {
      return waitFor(
        async () => {
          const path = `${base}/runs?project_id=${world.fx.projectId}&agent_id=${agentId}`;
          return (await api().request<RunData[]>('GET', path)).body.data[0];
        },
        10_000,
        'the run',
      );
    },
  };
}

/** Activity types scheduled and timers started in a workflow's history. */
async function historyOf(world: SessionWorld, workflowId: string) {
  const history = await world.client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  return {
    activities: events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []),
    timers: events.filter((e) => e.timerStartedEventAttributes).length,
  };
}

describe.skipIf(noTemporal())('MCP tool calls run as tasks, polled on durable timers', () => {
  let mcp: TasksServer;
  beforeAll(async () => {
    mcp = await startTasksServer();
  });
  afterAll(async () => {
    await mcp?.stop();
  });
  beforeEach(() => {
    mcp.heard.length = 0;
  });

  describe('with short poll intervals', () => {
    const world = useSessionWorld(FAST_POLLS);
    const h = helpers(world, () => mcp);

    it("completes with the task's result reaching the model, polling between timers", async () => {
      const done = await h.turn('slow_compute', { seconds: 2, label: 'pi' }, 'Computed.');
      expect(done.status).toBe('completed');
      expect(done.output?.content).toBe('Computed.');
      expect(done.tool_calls[0]).toMatchObject({
        name: 'slow_compute',
        output: 'computed pi in 2 s',
        is_error: false,
      });
      expect(sentMessages(world.fx.vendor, 1)).toContainEqual({
        role: 'tool',
        content: 'computed pi in 2 s',
      });

      // Called once; the task's polls are short activities between durable timers.
      expect(mcp.calls()).toBe(1);
      expect(mcp.heard.filter((r) => r.method === 'tasks/get').length).toBeGreaterThanOrEqual(2);
      const { activities, timers } = await historyOf(world, done.workflow_id);
      expect(activities.filter((a) => a === 'runMcpTool')).toHaveLength(1);
      expect(activities.filter((a) => a === 'pollMcpTask').length).toBeGreaterThanOrEqual(2);
      expect(timers).toBeGreaterThanOrEqual(2);

      // The server's status messages are progress events, each once.
      const events = await readSse(`${world.fx.api.url}${base}/runs/${done.run_id}/events`, {});
      const progress = events.filter((e) => e.event === 'tool_call.progress').map((e) => e.data);
      expect(progress[0]).toMatchObject({ step: 1, name: 'slow_compute', task_status: 'working' });
      expect(String(progress[0]!.message)).toMatch(/^computing \(\d of 2 s\)$/);
      expect(new Set(progress.map((p) => p.message)).size).toBe(progress.length);
    });

    it('a task that fails in the server is an error result for the model', async () => {
      const done = await h.turn('protocol_error_job', { seconds: 1 }, 'It failed.');
      expect(done.status).toBe('completed');
      expect(done.tool_calls[0]).toMatchObject({ name: 'protocol_error_job', is_error: true });
      expect(String(done.tool_calls[0]!.output)).toContain(
        'failed: the job crashed inside the server (code -32603)',
      );
    });

    it('a worker stopped mid-task resumes polling without calling the tool again', async () => {
      const { response } = await h.start(
        'slow_compute',
        { seconds: 4, label: 'e' },
        'Computed after a restart.',
      );
      await h.taskPolled();
      await world.stopWorker();
      const polls = mcp.heard.filter((r) => r.method === 'tasks/get').length;
      await new Promise((r) => setTimeout(r, 1_000));
      // Nothing polls while no worker runs: the task's id waits in the workflow's state.
      expect(mcp.heard.filter((r) => r.method === 'tasks/get')).toHaveLength(polls);
      await world.restartWorker();
      const done = (await response).body.data;
      expect(done.status).toBe('completed');
      expect(done.tool_calls[0]).toMatchObject({ output: 'computed e in 4 s', is_error: false });
      expect(mcp.calls()).toBe(1);
    });

    it('a run cancelled mid-task cancels the task on its server', async () => {
      const { agentId, response } = await h.start('slow_compute', { seconds: 60, label: 'forever' }, 'never');
      const taskId = await h.taskPolled();
      const run = await h.runOf(agentId);
      const cancelled = await world.fx.api.request<RunData>(
        'POST',
        `${base}/runs/${run.run_id}/cancel?project_id=${world.fx.projectId}`,
        { action: 'interrupt' },
      );
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.data.status).toBe('cancelled');
      expect(mcp.cancelled()).toEqual([taskId]);
      expect(mcp.tasks.get(taskId)?.status).toBe('cancelled');
      expect((await response).body.data.status).toBe('cancelled');
      expect(mcp.calls()).toBe(1);
    });
  });

  describe('past the deadline', () => {
    const world = useSessionWorld({ ...FAST_POLLS, MCP_TASK_MAX_MS: '1500' });
    const h = helpers(world, () => mcp);

    it('a task that outlives MCP_TASK_MAX_MS is cancelled and an error result for the model', async () => {
      const done = await h.turn('slow_compute', { seconds: 60, label: 'late' }, 'Too slow.');
      expect(done.status).toBe('completed');
      expect(done.tool_calls[0]).toMatchObject({ name: 'slow_compute', is_error: true });
      expect(String(done.tool_calls[0]!.output)).toContain('did not finish within 1500 ms');
      const taskId = [...mcp.tasks.values()].at(-1)!.taskId;
      expect(mcp.cancelled()).toContain(taskId);
      expect(mcp.tasks.get(taskId)?.status).toBe('cancelled');
    });
  });

  describe('a worker killed mid-task', () => {
    // Worker processes of their own; a killed worker's poll is taken over after 2 s without heartbeats.
    const env = sessionEnv({ ...FAST_POLLS, SESSION_TOOL_HEARTBEAT_TIMEOUT_MS: '2000' });
    let fx: Fixture;
    beforeAll(async () => {
      fx = await startFixture(env);
    });
    afterAll(async () => {
      await fx?.close();
    });
    // The fixture exists once beforeAll has run.
    const h = helpers(
      {
        get fx() {
          return fx;
        },
      } as SessionWorld,
      () => mcp,
    );

    it('another worker polls on, and the tool is called once', async () => {
      const doomed = await spawnWorker(env);
      let survivor: Awaited<ReturnType<typeof spawnWorker>> | undefined;
      try {
        // A task that works until the test finishes it, so the kill lands mid-task.
        const { response } = await h.start(
          'slow_compute',
          { seconds: 600, label: 'k' },
          'Computed after a crash.',
        );
        const taskId = await h.taskPolled();
        survivor = await spawnWorker(env);
        await killHard(doomed.child);
        const polls = () => mcp.heard.filter((r) => r.method === 'tasks/get').length;
        const atKill = polls();
        await waitFor(() => polls() > atKill + 1, 20_000, 'polls by the other worker');
        mcp.finish(taskId);
        const done = (await response).body.data;
        expect(done.status).toBe('completed');
        expect(done.tool_calls[0]).toMatchObject({ output: 'computed k in 600 s', is_error: false });
        expect(mcp.calls()).toBe(1);
      } finally {
        await killHard(doomed.child);
        if (survivor) await killHard(survivor.child);
      }
    }, 120_000);
  });
});
