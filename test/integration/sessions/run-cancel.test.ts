/**
 * Cancelling a run (POST /runs/{id}/cancel) against real Temporal, Postgres,
 * a real MCP server and scripted vendors: while the model streams (the vendor
 * sees its request aborted), while the turn
 * waits for approval, keeping the turn (`interrupt`: the next turn is valid for
 * Anthropic, which refuses a tool_use without its tool_result) or removing it
 * (`rollback`: the next turn's request does not contain it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAuthenticatedMcpServer,
  startEverythingServer,
  type RunningMcp,
} from '../../fixtures/mcp-servers.js';
import { startAnthropicVendor } from '../../fixtures/vendors/anthropic.js';
import type { ScriptedVendor } from '../../fixtures/vendors/scripted-server.js';
import { createModel, createProvider } from '../../helpers/factories/config.js';
import { uniqueName } from '../../helpers/factories.js';
import {
  readSse,
  sentMessages,
  useSessionWorld,
  waitFor,
  type RunData,
  type SseEvent,
} from './session-harness.js';

interface CancelledRun extends RunData {
  rolled_back: boolean;
  finished_at: string | null;
}

describe('cancelling a run', () => {
  const world = useSessionWorld();
  let everything: RunningMcp;
  let holding: Awaited<ReturnType<typeof startAuthenticatedMcpServer>>;
  let anthropic: ScriptedVendor;
  let anthropicModelId: string;

  beforeAll(async () => {
    everything = await startEverythingServer('streamableHttp');
    holding = await startAuthenticatedMcpServer({ token: 'tok-c', tenant: 'initech', extraTools: true });
    anthropic = await startAnthropicVendor();
    const provider = await createProvider(world.fx.api, {
      provider_type: 'anthropic',
      base_url: anthropic.url,
    });
    const model = await createModel(world.fx.api, world.fx.projectId, {
      provider_type: 'anthropic',
      provider_id: provider.id,
      model_id: 'claude-test',
    });
    anthropicModelId = model.id;
  }, 60_000);
  afterAll(async () => {
    await everything?.stop();
    await holding?.stop();
    await anthropic?.close();
  });

  const cancel = (runId: string, body: Record<string, unknown>) =>
    world.fx.api.request<CancelledRun>(
      'POST',
      `/api/agent-server/runs/${runId}/cancel?project_id=${world.fx.projectId}`,
      body,
    );
  const get = (runId: string) => world.fx.api.request<CancelledRun>('GET', `/api/agent-server/runs/${runId}`);

  /** Starts a streamed turn held by the vendor mid-answer; resolves once readers saw its first words. */
  async function heldTurn(agentId: string, message: string, conversationId: string) {
    world.fx.vendor.script({ reply: { text: 'one two three four' }, hold: true });
    const events: SseEvent[] = [];
    let sawDelta!: () => void;
    const delta = new Promise<void>((r) => (sawDelta = r));
    const stream = world.fx.stream({ agent_id: agentId, message, conversation_id: conversationId }, (ev) => {
      events.push(ev);
      if (ev.event === 'message.delta') sawDelta();
    });
    await delta;
    const runId = events[0]!.data.run_id as string;
    const workflowId = (await get(runId)).body.data.workflow_id;
    return { runId, workflowId, events, stream };
  }

  async function mcpServer(endpoint = everything.url, fields: Record<string, unknown> = {}): Promise<string> {
    const res = await world.fx.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${world.fx.projectId}`,
      { name: uniqueName('mcp'), endpoint, ...fields },
    );
    if (res.status !== 200) throw new Error(res.text);
    return res.body.data.id;
  }

  it('interrupt while the model streams: the call is aborted, the partial answer stays', async () => {
    const agent = await world.fx.agent();
    const conversationId = uniqueName('conv');
    const { runId, stream } = await heldTurn(agent.id, 'count for me', conversationId);

    // The vendor holds the stream until it is aborted: an answer means the cancel cut it off.
    const res = await cancel(runId, { action: 'interrupt' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'cancelled', rolled_back: false });
    expect(res.body.data.output?.content).toBe('one ');
    // The vendor saw its request go away, and readers of the stream learn of the cancel.
    await waitFor(() => world.fx.vendor.aborted === 1 || undefined, 5_000, 'the vendor to see the abort');
    const events = await stream;
    expect(events.at(-1)).toMatchObject({ event: 'run.cancelled', data: { action: 'interrupt' } });

    // A second cancel answers with the cancelled run.
    const again = await cancel(runId, { action: 'rollback' });
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ status: 'cancelled', rolled_back: false });

    // The next turn sees the cut-off answer.
    const next = await world.fx.converse({
      agent_id: agent.id,
      message: 'and now?',
      conversation_id: conversationId,
    });
    expect(next.body.data.status).toBe('completed');
    const sent = sentMessages(world.fx.vendor, 1).filter((m) => m.role !== 'system');
    expect(sent).toEqual([
      { role: 'user', content: 'count for me' },
      { role: 'assistant', content: 'one ' },
      { role: 'user', content: 'and now?' },
    ]);
  });

  it('rollback removes the turn from the conversation; the run stays with rolled_back', async () => {
    const agent = await world.fx.agent();
    const conversationId = uniqueName('conv');
    const { runId, stream } = await heldTurn(agent.id, 'forget this question', conversationId);
    const res = await cancel(runId, { action: 'rollback' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'cancelled', rolled_back: true, output: null });
    await stream;
    expect((await get(runId)).body.data).toMatchObject({ status: 'cancelled', rolled_back: true });
    // Its events are gone but for the cancel, which readers that resume still get.
    const replay = await readSse(`${world.fx.api.url}/api/agent-server/runs/${runId}/events`, {});
    expect(replay.map((e) => e.event)).toEqual(['run.cancelled']);

    const next = await world.fx.converse({
      agent_id: agent.id,
      message: 'a fresh start',
      conversation_id: conversationId,
    });
    expect(next.body.data.status).toBe('completed');
    const sent = sentMessages(world.fx.vendor, 1).filter((m) => m.role !== 'system');
    expect(sent).toEqual([{ role: 'user', content: 'a fresh start' }]);
  });

  it('interrupt while awaiting approval: the call is answered "cancelled" and Anthropic accepts the next turn', async () => {
    const serverId = await mcpServer();
    const agent = await world.fx.agent({
      model_id: anthropicModelId,
      mcp_servers: [{ mcp_server_id: serverId, tool_filters: ['echo'], tools_requiring_approval: ['echo'] }],
    });
    anthropic.reset();
    anthropic.script({ reply: { tool_calls: [{ name: 'echo', arguments: { message: 'hi' } }] } });
    const conversationId = uniqueName('conv');
    const paused = await world.fx.converse({
      agent_id: agent.id,
      message: 'echo hi',
      conversation_id: conversationId,
    });
    expect(paused.body.data.status).toBe('awaiting_approval');

    const res = await cancel(paused.body.data.run_id, { action: 'interrupt' });
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('cancelled');
    expect(res.body.data.tool_calls).toEqual([expect.objectContaining({ name: 'echo', is_error: true })]);
    expect(String(res.body.data.tool_calls[0]!.output)).toContain('cancelled');
    expect((res.body.data as unknown as { pause: unknown }).pause).toBeNull();

    anthropic.script({ reply: { text: 'fine' } });
    const next = await world.fx.converse({
      agent_id: agent.id,
      message: 'never mind',
      conversation_id: conversationId,
    });
    expect(next.body.data.error).toBeNull();
    expect(next.body.data.status).toBe('completed');
    // The request held the tool_use, its "cancelled" tool_result and the new message.
    const messages = (
      anthropic.received.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> }
    ).messages;
    expect(JSON.stringify(messages)).toContain('tool_result');
    expect(JSON.stringify(messages)).toContain('cancelled');
    // Without that result the vendor refuses the transcript, as Anthropic's API does.
    const unanswered = messages.map((m) => ({
      ...m,
      content: Array.isArray(m.content)
        ? (m.content as Array<{ type: string }>).filter((b) => b.type !== 'tool_result')
        : m.content,
    }));
    const refused = await fetch(`${anthropic.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 10, messages: unanswered }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('tool_result') as unknown },
    });
  });

  it('rollback while awaiting approval; a completed run answers 409, an unknown one 404, a bad action 400', async () => {
    const serverId = await mcpServer();
    const agent = await world.fx.agent({
      mcp_servers: [{ mcp_server_id: serverId, tool_filters: ['echo'], tools_requiring_approval: ['echo'] }],
    });
    world.fx.vendor.script({ reply: { tool_calls: [{ name: 'echo', arguments: { message: 'x' } }] } });
    const paused = await world.fx.converse({ agent_id: agent.id, message: 'echo x' });
    expect(paused.body.data.status).toBe('awaiting_approval');
    const bad = await cancel(paused.body.data.run_id, { action: 'stop' });
    expect(bad.status).toBe(400);
    expect(bad.body.errorDetails.fields?.map((f) => f.field)).toEqual(['action']);
    const rolled = await cancel(paused.body.data.run_id, { action: 'rollback' });
    expect(rolled.body.data).toMatchObject({ status: 'cancelled', rolled_back: true });

    const done = await world.fx.converse({ agent_id: agent.id, message: 'plain' });
    expect(done.body.data.status).toBe('completed');
    const late = await cancel(done.body.data.run_id, { action: 'interrupt' });
    expect(late.status).toBe(409);
    expect(late.body.error).toBe(true);
    expect((await cancel('00000000-0000-4000-8000-000000000000', { action: 'interrupt' })).status).toBe(404);
  });

  it('interrupt while an MCP call runs: the call is cancelled and answered "cancelled"', async () => {
    const serverId = await mcpServer(holding.url, {
      headers: { Authorization: 'Bearer tok-c', 'x-tenant': 'initech' },
    });
    const agent = await world.fx.agent({
      mcp_servers: [{ mcp_server_id: serverId, tool_filters: ['held'] }],
    });
    world.fx.vendor.script({ reply: { tool_calls: [{ name: 'held', arguments: {} }] } });
    const turn = world.fx.converse({ agent_id: agent.id, message: 'wait for it', stream: false });
    await holding.whenHeld();
    const runId = await waitFor(async () => {
      const list = await world.fx.api.request<CancelledRun[]>(
        'GET',
        `/api/agent-server/agents/${agent.id}/runs`,
      );
      return list.body.data[0]?.run_id;
    });
    // The MCP call is held until released: an answer means the cancel cut it off.
    const res = await cancel(runId, { action: 'interrupt' });
    expect(res.body.data.status).toBe('cancelled');
    expect(res.body.data.tool_calls).toEqual([expect.objectContaining({ name: 'held', is_error: true })]);
    expect(String(res.body.data.tool_calls[0]!.output)).toContain('cancelled');
    expect((await turn).body.data.status).toBe('cancelled');
    holding.releaseHeld();
  });

  it('a run waiting behind another is cancelled at once and never runs', async () => {
    const agent = await world.fx.agent();
    const conversationId = uniqueName('conv');
    const first = await heldTurn(agent.id, 'first', conversationId);
    let created!: (runId: string) => void;
    const secondRun = new Promise<string>((r) => (created = r));
    const second = world.fx.stream(
      { agent_id: agent.id, message: 'second', conversation_id: conversationId },
      (ev) => {
        if (ev.event === 'run.created') created(ev.data.run_id as string);
      },
    );
    const secondId = await secondRun;
    // Wait until the session holds it in its queue, behind the first turn.
    await waitFor(async () => {
      const desc = await world.client.workflow
        .getHandle(first.workflowId)
        .query<{ queued_run_ids: string[] }>('state');
      return desc.queued_run_ids.includes(secondId) || undefined;
    });
    const res = await cancel(secondId, { action: 'rollback' });
    expect(res.body.data).toMatchObject({ status: 'cancelled', rolled_back: true });
    expect((await second).at(-1)!.event).toBe('run.cancelled');
    world.fx.vendor.release();
    const events = await first.stream;
    expect(events.at(-1)!.event).toBe('run.completed');
    // The model was called for the first turn only, and it did not see the cancelled message.
    expect(world.fx.vendor.received).toHaveLength(1);
    const later = await world.fx.converse({
      agent_id: agent.id,
      message: 'third',
      conversation_id: conversationId,
    });
    expect(later.body.data.status).toBe('completed');
    const sent = sentMessages(world.fx.vendor, 1).filter((m) => m.role === 'user');
    expect(sent.map((m) => m.content)).toEqual(['first', 'third']);
  });

  it('a run whose session is no longer running is still cancelled (a session is started to close it)', async () => {
    const serverId = await mcpServer();
    const agent = await world.fx.agent({
      mcp_servers: [{ mcp_server_id: serverId, tool_filters: ['echo'], tools_requiring_approval: ['echo'] }],
    });
    world.fx.vendor.script({ reply: { tool_calls: [{ name: 'echo', arguments: { message: 'x' } }] } });
    const paused = await world.fx.converse({ agent_id: agent.id, message: 'echo x' });
    expect(paused.body.data.status).toBe('awaiting_approval');
    // An operator terminated the session: nothing will ever end this run by itself.
    await world.client.workflow.getHandle(paused.body.data.workflow_id).terminate('operator');

    const res = await cancel(paused.body.data.run_id, { action: 'interrupt' });
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('cancelled');
    expect(String(res.body.data.tool_calls[0]!.output)).toContain('cancelled');
  });
});
