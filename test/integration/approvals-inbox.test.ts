/**
 * The approvals inbox (issue #24): GET /approvals?project_id= lists every run
 * of a project paused on tool calls, with the calls, since when and until
 * when; deciding through POST /runs/{run_id}/approvals takes the calls (and
 * then the run) out of it. The run view carries the same pause. Real
 * Temporal, real Postgres, a real MCP server (server-everything), a scripted
 * OpenAI-format vendor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startEverythingServer, type RunningMcp } from '../fixtures/mcp-servers.js';
import { createModel } from '../helpers/factories/config.js';
import { createPrompt } from '../helpers/factories/content.js';
import { createProject, uniqueName } from '../helpers/factories.js';
import { noTemporal } from '../helpers/services.js';
import { useSessionWorld } from './sessions/session-harness.js';

const API = '/api/agent-server';
const HOUR_MS = 3_600_000;

interface Call {
  id: string;
  name: string;
  arguments: string;
  step: number;
  kind: string;
}
interface InboxEntry {
  run_id: string;
  project_id: string;
  agent_id: string;
  agent_name: string;
  conversation_id: string;
  since: string;
  timeout_at: string | null;
  calls: Call[];
  decided: Array<{ id: string; decision: string; by: string }>;
  workflow_id: string;
  temporal_ui_url: string;
}
interface Run {
  run_id: string;
  status: string;
  pending_approvals: Call[];
  pause: {
    reason: string;
    since: string;
    timeout_at: string | null;
    details: { pending_call_ids: string[] };
  } | null;
}

describe.skipIf(noTemporal())('approvals inbox', () => {
  const world = useSessionWorld();
  let everything: RunningMcp;

  beforeAll(async () => {
    everything = await startEverythingServer('streamableHttp');
  }, 60_000);
  afterAll(async () => {
    await everything?.stop();
  });

  const inbox = (query: string) => world.fx.api.request<InboxEntry[]>('GET', `${API}/approvals?${query}`);
  const run = (id: string) => world.fx.api.request<Run>('GET', `${API}/runs/${id}`);
  const approve = (id: string, body: Record<string, unknown>) =>
    world.fx.api.request<Run>('POST', `${API}/runs/${id}/approvals`, body);

  /** An agent of `projectId` whose `echo` and `get-sum` calls wait for approval. */
  async function approvingAgent(projectId: string, fields: Record<string, unknown> = {}) {
    const { api } = world.fx;
    const mcp = await api.request<{ id: string }>('POST', `${API}/mcp-servers?project_id=${projectId}`, {
      name: uniqueName('mcp'),
      endpoint: everything.url,
    });
    const model =
      projectId === world.fx.projectId
        ? world.fx.modelId
        : (await createModel(api, projectId, { provider_id: world.fx.providerId, model_id: 'gpt-test' })).id;
    const prompt = await createPrompt(api, projectId, { template: 'Use tools.' });
    const agent = await api.request<{ id: string; name: string }>(
      'POST',
      `${API}/agents?project_id=${projectId}`,
      {
        name: uniqueName('agent'),
        model_id: model,
        prompt_id: prompt.id,
        mcp_servers: [
          {
            mcp_server_id: mcp.body.data.id,
            tool_filters: ['echo', 'get-sum'],
            tools_requiring_approval: ['echo', 'get-sum'],
          },
        ],
        ...fields,
      },
    );
    expect(agent.status).toBe(200);
    return agent.body.data;
  }

  /** A turn of `agentId` that pauses on an `echo` call. */
  async function paused(projectId: string, agentId: string, conversationId = `inbox-${randomUUID()}`) {
    world.fx.vendor.script({
      reply: { tool_calls: [{ name: 'echo', arguments: { message: 'wait for me' } }] },
    });
    const res = await world.fx.api.request<Run>('POST', `${API}/converse?project_id=${projectId}`, {
      agent_id: agentId,
      conversation_id: conversationId,
      message: 'echo it',
    });
    expect(res.body.data.status).toBe('awaiting_approval');
    return res.body.data.run_id;
  }

  it('a paused run shows in the inbox with the calls waiting, since when and until when; deciding takes it out', async () => {
    const { fx } = world;
    const agent = await approvingAgent(fx.projectId, { approval_timeout_ms: HOUR_MS });
    fx.vendor.script(
      {
        reply: {
          tool_calls: [
            { name: 'echo', arguments: { message: 'inbox words' } },
            { name: 'get-sum', arguments: { a: 2, b: 3 } },
          ],
        },
      },
      { reply: { text: 'both done' } },
    );
    const conversationId = `inbox-${randomUUID()}`;
    const res = await fx.converse({ agent_id: agent.id, conversation_id: conversationId, message: 'go' });
    expect(res.body.data.status).toBe('awaiting_approval');
    const runId = res.body.data.run_id;

    const listed = await inbox(`project_id=${fx.projectId}`);
    expect(listed.status).toBe(200);
    const entry = listed.body.data.find((e) => e.run_id === runId)!;
    expect(entry).toMatchObject({
      project_id: fx.projectId,
      agent_id: agent.id,
      agent_name: agent.name,
      conversation_id: conversationId,
      workflow_id: `session/${agent.id}/${conversationId}`,
      decided: [],
    });
    expect(entry.calls).toEqual([
      expect.objectContaining({
        name: 'echo',
        arguments: JSON.stringify({ message: 'inbox words' }),
        kind: 'mcp',
      }),
      expect.objectContaining({ name: 'get-sum', arguments: JSON.stringify({ a: 2, b: 3 }) }),
    ]);
    const since = Date.parse(entry.since);
    expect(since).toBeGreaterThan(Date.now() - 60_000);
    expect(Date.parse(entry.timeout_at!)).toBe(since + HOUR_MS);

    // The run view carries the same pause, and the run lists find it by status.
    const view = (await run(runId)).body.data;
    expect(view.pause).toEqual({
      reason: 'approval',
      since: entry.since,
      timeout_at: entry.timeout_at,
      details: { pending_call_ids: entry.calls.map((c) => c.id) },
    });
    const waiting = await fx.api.request<Run[]>(
      'GET',
      `${API}/agents/${agent.id}/runs?status=awaiting_approval`,
    );
    expect(waiting.body.data.map((r) => r.run_id)).toEqual([runId]);

    // One call decided: the other still waits, and the entry says what was decided.
    const [echo, sum] = entry.calls;
    expect((await approve(runId, { approved_call_ids: [echo!.id] })).status).toBe(200);
    const partly = (await inbox(`project_id=${fx.projectId}`)).body.data.find((e) => e.run_id === runId)!;
    expect(partly.calls.map((c) => c.id)).toEqual([sum!.id]);
    expect(partly.decided).toEqual([
      expect.objectContaining({ id: echo!.id, decision: 'approved', by: 'user' }),
    ]);

    // The last one decided: the turn goes on and the run leaves the inbox.
    const done = await approve(runId, { rejected_call_ids: [sum!.id], wait: true });
    expect(done.body.data.status).toBe('completed');
    expect(done.body.data.pause).toBeNull();
    const after = await inbox(`project_id=${fx.projectId}`);
    expect(after.body.data.map((e) => e.run_id)).not.toContain(runId);
  });

  it("lists only the project's own paused runs, the latest pause first, and filters by agent", async () => {
    const { fx } = world;
    const other = await createProject(fx.api);
    const first = await approvingAgent(fx.projectId);
    const second = await approvingAgent(fx.projectId);
    const foreign = await approvingAgent(other.id);
    const a = await paused(fx.projectId, first.id);
    const b = await paused(fx.projectId, second.id);
    const c = await paused(other.id, foreign.id);

    const mine = (await inbox(`project_id=${fx.projectId}`)).body.data.map((e) => e.run_id);
    expect(mine).toContain(a);
    expect(mine).toContain(b);
    expect(mine).not.toContain(c);
    expect(mine.indexOf(b)).toBeLessThan(mine.indexOf(a));
    const theirs = await inbox(`project_id=${other.id}`);
    expect(theirs.body.data.map((e) => e.run_id)).toEqual([c]);
    expect(theirs.body.data[0]!.timeout_at).toBeNull();
    const byAgent = await inbox(`project_id=${fx.projectId}&agent_id=${first.id}`);
    expect(byAgent.body.data.map((e) => e.run_id)).toEqual([a]);
    const paged = await inbox(`project_id=${fx.projectId}&limit=1`);
    expect(paged.body.data.map((e) => e.run_id)).toEqual([b]);
  });

  it('answers 400 naming the field and 404 for an unknown project', async () => {
    const missing = await inbox('');
    expect(missing.status).toBe(400);
    expect(missing.body.errorDetails.fields?.map((f) => f.field)).toEqual(['project_id']);
    const badAgent = await inbox(`project_id=${world.fx.projectId}&agent_id=nope`);
    expect(badAgent.body.errorDetails.fields?.map((f) => f.field)).toEqual(['agent_id']);
    const limit = await inbox(`project_id=${world.fx.projectId}&limit=201`);
    expect(limit.body.errorDetails.fields?.map((f) => f.field)).toEqual(['limit']);
    const unknown = await inbox(`project_id=${randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('Not found');
  });
});
