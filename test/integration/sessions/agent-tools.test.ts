/**
 * Agent tools in a real session (issue #7): real Temporal, real Postgres,
 * real MCP servers (server-everything over Streamable HTTP and SSE, and our
 * authenticated server), a scripted model that asks for specific tool calls.
 * MCP round trips with filters and duplicate names, a failing tool the model
 * recovers from, and durable human approval (accepted, rejected, timed out,
 * and given after the worker was replaced).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAuthenticatedMcpServer,
  startEverythingServer,
  type RunningMcp,
} from '../../fixtures/mcp-servers.js';
import {
  readSse,
  sentMessages,
  startInProcessWorker,
  useSessionWorld,
  waitFor,
  type RunData,
} from './session-harness.js';
import { uniqueName } from '../../helpers/factories.js';

interface ToolRun extends RunData {
  tools: {
    offered: Array<{
      name: string;
      kind: string;
      server_name?: string;
      tool?: string;
      requires_approval: boolean;
    }>;
    servers: Array<{
      name: string;
      filters: string[];
      listed: string[];
      offered: string[];
      renamed?: Record<string, string>;
      error?: string;
    }>;
    sandbox: { offered: boolean; reason?: string };
  } | null;
  pending_approvals: Array<{ id: string; name: string; arguments: string; step: number }>;
  approvals: Array<{ id: string; decision: string; by: string }>;
}

describe('agent tools: MCP and approval', () => {
  const world = useSessionWorld();
  let everything: RunningMcp;
  let everythingSse: RunningMcp;
  let tenantA: RunningMcp;
  let tenantB: RunningMcp & { seen: string[] };

  beforeAll(async () => {
    [everything, everythingSse, tenantA, tenantB] = await Promise.all([
      startEverythingServer('streamableHttp'),
      startEverythingServer('sse'),
      startAuthenticatedMcpServer({ token: 'tok-a', tenant: 'acme', extraTools: true }),
      startAuthenticatedMcpServer({ token: 'tok-b', tenant: 'globex' }),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([everything, everythingSse, tenantA, tenantB].map((s) => s?.stop()));
  });

  async function mcpServer(
    endpoint: string,
    fields: Record<string, unknown> = {},
  ): Promise<{ id: string; name: string }> {
    const name = uniqueName('mcp');
    const res = await world.fx.api.request<{ id: string; name: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${world.fx.projectId}`,
      { name, endpoint, ...fields },
    );
    if (res.status !== 200) throw new Error(res.text);
    return res.body.data;
  }

  const get = (runId: string) => world.fx.api.request<ToolRun>('GET', `/api/agent-server/runs/${runId}`);
  const approve = (runId: string, body: Record<string, unknown>) =>
    world.fx.api.request<ToolRun>('POST', `/api/agent-server/runs/${runId}/approvals`, body);
  const toolNames = (i: number) =>
    (
      (world.fx.vendor.received[i]?.body.tools as Array<{ function: { name: string } }> | undefined) ?? []
    ).map((t) => t.function.name);
  /** The tool messages the model was sent in request i. */
  const toolResults = (i: number) =>
    sentMessages(world.fx.vendor, i)
      .filter((m) => m.role === 'tool')
      .map((m) => String(m.content));

  it('MCP round trip over Streamable HTTP and SSE: filters decide what the model sees, results come back, and the run records why', async () => {
    const http = await mcpServer(everything.url);
    const sse = await mcpServer(everythingSse.url, { transport: 'sse' });
    const agent = await world.fx.agent(
      {
        mcp_servers: [
          { mcp_server_id: http.id, tool_filters: ['echo', 'get-sum', 'no-such-tool'] },
          { mcp_server_id: sse.id, tool_filters: ['get-tiny-image'] },
        ],
      },
      'Use tools.',
    );
    world.fx.vendor.script(
      {
        reply: {
          tool_calls: [
            { name: 'echo', arguments: { message: 'hello tools' } },
            { name: 'get-sum', arguments: { a: 2, b: 40 } },
          ],
        },
      },
      { reply: { text: 'The sum is 42.' } },
    );
    const res = await world.fx.converse({ agent_id: agent.id, message: 'add' });
    expect(res.body.data.status).toBe('completed');
    expect(res.body.data.output?.content).toBe('The sum is 42.');
    // Exactly the filtered tools, from both transports.
    expect(toolNames(0).sort()).toEqual(['echo', 'get-sum', 'get-tiny-image']);
    const results = toolResults(1);
    expect(results[0]).toContain('hello tools');
    expect(results[1]).toContain('42');
    const run = (await get(res.body.data.run_id)).body.data;
    expect(run.tools?.servers).toEqual([
      expect.objectContaining({
        name: http.name,
        filters: ['echo', 'get-sum', 'no-such-tool'],
        offered: ['echo', 'get-sum'],
        unmatched_filters: ['no-such-tool'],
      }),
      expect.objectContaining({ name: sse.name, filters: ['get-tiny-image'], offered: ['get-tiny-image'] }),
    ]);
    expect(run.tools?.servers[0]!.listed.length).toBeGreaterThan(5);
    expect(run.warnings.join('\n')).toContain('no-such-tool');
    expect(run.tool_calls).toEqual([
      expect.objectContaining({ name: 'echo', is_error: false }),
      expect.objectContaining({ name: 'get-sum', is_error: false }),
    ]);
  });

  it('two servers with the same tool name: the names offered are unique and each maps back to its own server (headers reach both)', async () => {
    const a = await mcpServer(tenantA.url, {
      headers: { Authorization: 'Bearer tok-a', 'x-tenant': 'acme' },
    });
    const b = await mcpServer(tenantB.url, {
      headers: { Authorization: 'Bearer tok-b', 'x-tenant': 'globex' },
    });
    const agent = await world.fx.agent({
      mcp_servers: [
        { mcp_server_id: a.id, tool_filters: ['whoami'] },
        { mcp_server_id: b.id, tool_filters: ['whoami'] },
      ],
    });
    // First turn: see the names offered.
    world.fx.vendor.script({ reply: { text: 'looked' } });
    const first = await world.fx.converse({ agent_id: agent.id, message: 'look' });
    const names = toolNames(0);
    expect(names).toHaveLength(2);
    expect(new Set(names).size).toBe(2);
    const run = (await get(first.body.data.run_id)).body.data;
    const second = run.tools!.offered.find((t) => t.server_name === b.name)!;
    expect(second.tool).toBe('whoami');
    expect(names).toContain(second.name);
    // Second turn: the model calls the second server's name and gets globex's answer.
    world.fx.vendor.reset();
    world.fx.vendor.script(
      { reply: { tool_calls: [{ name: second.name, arguments: { greeting: 'hi' } }] } },
      { reply: { text: 'done' } },
    );
    const res = await world.fx.converse({
      agent_id: agent.id,
      conversation_id: first.body.data.conversation_id,
      message: 'who?',
    });
    expect(res.body.data.status).toBe('completed');
    expect(toolResults(1).at(-1)).toContain('hi globex');
    expect(tenantB.seen.some((s) => s.startsWith('POST Bearer tok-b globex'))).toBe(true);
  });

  it('a failing tool and a server that refuses us: the model hears what went wrong and recovers, the turn completes', async () => {
    const a = await mcpServer(tenantA.url, {
      headers: { Authorization: 'Bearer tok-a', 'x-tenant': 'acme' },
    });
    const wrong = await mcpServer(tenantB.url, {
      headers: { Authorization: 'Bearer nope', 'x-tenant': 'globex' },
    });
    const agent = await world.fx.agent({
      mcp_servers: [
        { mcp_server_id: a.id, tool_filters: ['fail', 'explode', 'whoami'] },
        { mcp_server_id: wrong.id, tool_filters: [] },
      ],
    });
    world.fx.vendor.script(
      {
        reply: {
          tool_calls: [
            { name: 'fail', arguments: {} },
            { name: 'explode', arguments: {} },
          ],
        },
      },
      { reply: { tool_calls: [{ name: 'whoami', arguments: {} }] } },
      { reply: { text: 'recovered' } },
    );
    const res = await world.fx.converse({ agent_id: agent.id, message: 'try' });
    expect(res.body.data.status).toBe('completed');
    expect(res.body.data.output?.content).toBe('recovered');
    const [failOut, explodeOut] = toolResults(1);
    expect(failOut).toContain('the widget of acme is broken');
    expect(explodeOut).toContain('kaboom in acme');
    expect(toolResults(2).at(-1)).toContain('hello acme');
    expect(res.body.data.tool_calls).toEqual([
      expect.objectContaining({ name: 'fail', is_error: true }),
      expect.objectContaining({ name: 'explode', is_error: true }),
      expect.objectContaining({ name: 'whoami', is_error: false }),
    ]);
    // The refusing server offered nothing and says why; its secret header is not repeated.
    const run = (await get(res.body.data.run_id)).body.data;
    const refused = run.tools!.servers.find((s) => s.name === wrong.name)!;
    expect(refused.error).toBeTruthy();
    expect(refused.offered).toEqual([]);
    expect(JSON.stringify(run)).not.toContain('Bearer nope');
    expect(run.warnings.some((w) => w.includes(wrong.name) && w.includes('could not be listed'))).toBe(true);
  });

  it('a long-running tool with progress: its result reaches the model, in one activity', async () => {
    const srv = await mcpServer(everything.url);
    const agent = await world.fx.agent({
      mcp_servers: [{ mcp_server_id: srv.id, tool_filters: ['trigger-long-running-operation'] }],
    });
    world.fx.vendor.script(
      {
        reply: {
          tool_calls: [{ name: 'trigger-long-running-operation', arguments: { duration: 1.5, steps: 3 } }],
        },
      },
      { reply: { text: 'operation done' } },
    );
    const res = await world.fx.converse({ agent_id: agent.id, message: 'run the long one' });
    expect(res.body.data.status).toBe('completed');
    expect(toolResults(1)[0]).toContain('Long running operation completed. Duration: 1.5 seconds, Steps: 3.');
    // One call, one activity (progress kept it alive; it was not retried).
    const history = await world.client.workflow.getHandle(res.body.data.workflow_id).fetchHistory();
    const mcpCalls = (history.events ?? []).filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runMcpTool',
    );
    expect(mcpCalls).toHaveLength(1);
    const started = (history.events ?? []).find(
      (e) =>
        e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() ===
        mcpCalls[0]!.eventId?.toString(),
    );
    expect(started?.activityTaskStartedEventAttributes?.attempt).toBe(1);
    // Its progress notifications are run events, numbered toward the total, for whoever reads the run.
    const events = await readSse(
      `${world.fx.api.url}/api/agent-server/runs/${res.body.data.run_id}/events`,
      {},
    );
    const progress = events.filter((e) => e.event === 'tool_call.progress').map((e) => e.data);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[0]).toMatchObject({ step: 1, name: 'trigger-long-running-operation', total: 3 });
    expect(progress.every((p) => typeof p.progress === 'number' && Number(p.progress) <= 3)).toBe(true);
  });

  it("a result's structuredContent and resource links are kept with the stored tool result", async () => {
    const srv = await mcpServer(everything.url);
    const agent = await world.fx.agent({
      mcp_servers: [
        { mcp_server_id: srv.id, tool_filters: ['get-structured-content', 'get-resource-links'] },
      ],
    });
    world.fx.vendor.script(
      {
        reply: {
          tool_calls: [
            { name: 'get-structured-content', arguments: { location: 'Chicago' } },
            { name: 'get-resource-links', arguments: { count: 2 } },
          ],
        },
      },
      { reply: { text: 'noted' } },
    );
    const res = await world.fx.converse({ agent_id: agent.id, message: 'weather and links' });
    expect(res.body.data.status).toBe('completed');
    const events = await readSse(
      `${world.fx.api.url}/api/agent-server/runs/${res.body.data.run_id}/events`,
      {},
    );
    const completed = events.filter((e) => e.event === 'tool_call.completed').map((e) => e.data);
    const weather = completed.find((d) => d.name === 'get-structured-content');
    const structured = weather?.structured_content as Record<string, unknown> | undefined;
    expect(typeof structured?.conditions).toBe('string');
    expect(typeof structured?.humidity).toBe('number');
    const links = completed.find((d) => d.name === 'get-resource-links')?.resource_links as Array<
      Record<string, string>
    >;
    expect(links).toHaveLength(2);
    expect(links[0]!.uri).toMatch(/^demo:\/\//);
    expect(links[0]!.name).toBeTruthy();
    // The model still reads text: the links are named in it too.
    expect(toolResults(1).join('\n')).toContain(links[0]!.uri);
  });

  it('approval accepted: the turn pauses with the pending call, resumes on approval and runs it', async () => {
    const srv = await mcpServer(everything.url);
    const agent = await world.fx.agent({
      mcp_servers: [{ mcp_server_id: srv.id, tool_filters: ['echo'], tools_requiring_approval: ['echo'] }],
    });
    world.fx.vendor.script(
      { reply: { tool_calls: [{ name: 'echo', arguments: { message: 'approved words' } }] } },
      { reply: { text: 'echoed' } },
    );
    const events: string[] = [];
    const streamed = await world.fx.stream({ agent_id: agent.id, message: 'echo please' }, (ev) =>
      events.push(ev.event),
    );
    // The converse stream ends at the pause.
    expect(events.at(-1)).toBe('run.paused');
    const paused = streamed.at(-1)!.data as {
      pending: Array<{ id: string; name: string; arguments: string }>;
    };
    expect(paused.pending).toEqual([
      expect.objectContaining({ name: 'echo', arguments: JSON.stringify({ message: 'approved words' }) }),
    ]);
    const runId = streamed[0]!.data.run_id as string;
    const run = await waitFor(async () => {
      const r = (await get(runId)).body.data;
      return r.status === 'awaiting_approval' ? r : undefined;
    });
    expect(run.pending_approvals).toEqual([
      expect.objectContaining({ id: paused.pending[0]!.id, name: 'echo' }),
    ]);
    expect(world.fx.vendor.received).toHaveLength(1);
    // Bad decisions are refused without touching the run.
    expect((await approve(runId, {})).status).toBe(400);
    const unknown = await approve(runId, { approved_call_ids: ['call_nope'] });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toContain('call_nope');
    // Approve, and wait for the turn to end.
    const done = await approve(runId, { approved_call_ids: [run.pending_approvals[0]!.id], wait: true });
    expect(done.status).toBe(200);
    expect(done.body.data.status).toBe('completed');
    expect(done.body.data.output?.content).toBe('echoed');
    expect(done.body.data.approvals).toEqual([
      expect.objectContaining({ id: run.pending_approvals[0]!.id, decision: 'approved', by: 'user' }),
    ]);
    expect(toolResults(1)[0]).toContain('approved words');
    // Deciding again is a conflict.
    expect((await approve(runId, { approved_call_ids: [run.pending_approvals[0]!.id] })).status).toBe(409);
    // The run's full event log tells the story.
    const all = await readSse(`${world.fx.api.url}/api/agent-server/runs/${runId}/events`, {});
    expect(all.map((e) => e.event)).toEqual(
      expect.arrayContaining([
        'run.paused',
        'run.resumed',
        'tool_call.started',
        'tool_call.completed',
        'run.completed',
      ]),
    );
  });

  it('approval rejected: the model is told "declined by user" and the turn goes on', async () => {
    const srv = await mcpServer(everything.url);
    const agent = await world.fx.agent({
      mcp_servers: [
        { mcp_server_id: srv.id, tool_filters: ['echo', 'get-sum'], tools_requiring_approval: ['echo'] },
      ],
    });
    world.fx.vendor.script(
      {
        reply: {
          tool_calls: [
            { name: 'echo', arguments: { message: 'secret' } },
            { name: 'get-sum', arguments: { a: 1, b: 2 } },
          ],
        },
      },
      { reply: { text: 'ok, I will not echo' } },
    );
    const res = await world.fx.converse({ agent_id: agent.id, message: 'go' });
    expect(res.body.data.status).toBe('awaiting_approval');
    const pending = (res.body.data as ToolRun).pending_approvals;
    expect(pending.map((p) => p.name)).toEqual(['echo']);
    const done = await approve(res.body.data.run_id, { rejected_call_ids: [pending[0]!.id], wait: true });
    expect(done.body.data.status).toBe('completed');
    const results = toolResults(1);
    expect(results[0]).toContain('declined by user');
    expect(results[1]).toContain('3');
    expect(done.body.data.tool_calls).toEqual([
      expect.objectContaining({ name: 'echo', is_error: true, output: 'declined by user' }),
      expect.objectContaining({ name: 'get-sum', is_error: false }),
    ]);
  });

  it("the agent's approval_timeout_ms declines undecided calls", async () => {
    const srv = await mcpServer(everything.url);
    const agent = await world.fx.agent({
      approval_timeout_ms: 1500,
      mcp_servers: [{ mcp_server_id: srv.id, tool_filters: ['echo'], tools_requiring_approval: ['echo'] }],
    });
    world.fx.vendor.script(
      { reply: { tool_calls: [{ name: 'echo', arguments: { message: 'x' } }] } },
      { reply: { text: 'nobody answered' } },
    );
    const res = await world.fx.converse({ agent_id: agent.id, message: 'go' });
    expect(res.body.data.status).toBe('awaiting_approval');
    const done = await waitFor(
      async () => {
        const r = (await get(res.body.data.run_id)).body.data;
        return r.status === 'completed' ? r : undefined;
      },
      20_000,
      'the timeout to decline',
    );
    expect(done.approvals).toEqual([expect.objectContaining({ decision: 'rejected', by: 'timeout' })]);
    expect(toolResults(1)[0]).toContain('declined by user');
    expect(done.output?.content).toBe('nobody answered');
  });

  it('approval given after the worker was replaced: the paused turn survives and finishes once', async () => {
    const srv = await mcpServer(everything.url);
    const agent = await world.fx.agent({
      mcp_servers: [{ mcp_server_id: srv.id, tool_filters: ['echo'], tools_requiring_approval: ['echo'] }],
    });
    world.fx.vendor.script(
      { reply: { tool_calls: [{ name: 'echo', arguments: { message: 'after restart' } }] } },
      { reply: { text: 'finished after restart' } },
    );
    const res = await world.fx.converse({ agent_id: agent.id, message: 'go' });
    expect(res.body.data.status).toBe('awaiting_approval');
    const callId = (res.body.data as ToolRun).pending_approvals[0]!.id;
    // A second worker on the same task queue; the first one goes away (its cache with it).
    const replacement = await startInProcessWorker(world.fx.env);
    try {
      await world.stopWorker();
      const done = await approve(res.body.data.run_id, { approved_call_ids: [callId], wait: true });
      expect(done.body.data.status).toBe('completed');
      expect(done.body.data.output?.content).toBe('finished after restart');
      expect(toolResults(1)[0]).toContain('after restart');
      expect(world.fx.vendor.received).toHaveLength(2);
    } finally {
      await world.restartWorker();
      await replacement.stop();
    }
  });

  it('an agent without SANDBOX_ENABLED on the server: converse works, execute_bash_commands is not offered, the run says why', async () => {
    const created = await world.fx.api.request<{ id: string; warnings?: string[] }>(
      'POST',
      `/api/agent-server/agents?project_id=${world.fx.projectId}`,
      {
        name: uniqueName('agent'),
        model_id: world.fx.modelId,
        prompt_id: (await world.fx.agent()).promptId,
        sandbox: { enabled: true },
      },
    );
    expect(created.status).toBe(200);
    expect(JSON.stringify(created.body)).toContain('SANDBOX_ENABLED');
    world.fx.vendor.script({ reply: { text: 'no sandbox here' } });
    const res = await world.fx.converse({ agent_id: created.body.data.id, message: 'run ls' });
    expect(res.body.data.status).toBe('completed');
    expect(toolNames(0)).toEqual([]);
    expect(res.body.data.warnings.join('\n')).toContain('SANDBOX_ENABLED');
    const run = (await get(res.body.data.run_id)).body.data;
    expect(run.tools?.sandbox.offered).toBe(false);
    expect(run.tools?.sandbox.reason).toContain('SANDBOX_ENABLED');
  });
});
