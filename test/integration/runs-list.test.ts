/**
 * Lists of runs for the console (issue #24): per conversation, per agent and
 * per project, newest first, in the same view as GET /runs/{run_id}, with the
 * status filter (comma-separated or repeated), a created_at window, paging,
 * project scoping and the 400/404 answers. Real Temporal, real Postgres, a
 * scripted OpenAI-format vendor.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createModel } from '../helpers/factories/config.js';
import { createProject } from '../helpers/factories.js';
import { noTemporal } from '../helpers/services.js';
import { useSessionWorld, type RunData } from './sessions/session-harness.js';

const API = '/api/agent-server';

interface ListedRun extends RunData {
  project_id: string;
  agent_id: string | null;
  agent_name: string | null;
  model: string | null;
  cost_usd: number | null;
  pause: unknown;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
}

describe.skipIf(noTemporal())('run lists', () => {
  const world = useSessionWorld();
  const list = (path: string) => world.fx.api.request<ListedRun[]>('GET', `${API}${path}`);
  const ids = (runs: ListedRun[]) => runs.map((r) => r.run_id);

  let alice: { id: string };
  let bob: { id: string };
  const conversation = `runs-${randomUUID()}`;
  /** Oldest first: alice completed, alice failed, bob completed (all in `conversation`), alice completed elsewhere. */
  const runs: ListedRun[] = [];

  beforeAll(async () => {
    const { fx } = world;
    // A priced model, so the runs carry a cost.
    const priced = await createModel(fx.api, fx.projectId, {
      provider_id: fx.providerId,
      model_id: 'gpt-test',
      pricing: { input_per_million_usd: 2, output_per_million_usd: 8 },
    });
    // A model id no Model resource prices and no list price covers. (Calls are priced by provider and
    // model id, so bob's calls on alice's `gpt-test` would cost what alice's Model says.)
    const unpriced = await createModel(fx.api, fx.projectId, {
      provider_id: fx.providerId,
      model_id: `gpt-unpriced-${randomUUID().slice(0, 8)}`,
    });
    alice = await fx.agent({ model_id: priced.id });
    bob = await fx.agent({ model_id: unpriced.id });
    const turn = async (agentId: string, conversationId: string, message: string) => {
      const res = await fx.converse({ agent_id: agentId, conversation_id: conversationId, message });
      expect(res.status).toBe(200);
      runs.push(res.body.data as ListedRun);
    };
    fx.vendor.script({ reply: { text: 'first answer', usage: { input: 1000, output: 500 } } });
    await turn(alice.id, conversation, 'one');
    fx.vendor.script({ error: { status: 400, message: 'the scripted model refuses' } });
    await turn(alice.id, conversation, 'two');
    fx.vendor.script({ reply: { text: 'bob here' } });
    await turn(bob.id, conversation, 'three');
    fx.vendor.script({ reply: { text: 'elsewhere' } });
    await turn(alice.id, `other-${randomUUID()}`, 'four');
    expect(runs.map((r) => r.status)).toEqual(['completed', 'failed', 'completed', 'completed']);
  });

  it("a conversation's runs: every agent's turns in it, newest first, in the view of GET /runs/{run_id}", async () => {
    const res = await list(`/conversations/${conversation}/runs?project_id=${world.fx.projectId}`);
    expect(res.status).toBe(200);
    expect(ids(res.body.data)).toEqual([runs[2]!.run_id, runs[1]!.run_id, runs[0]!.run_id]);
    // The same view as the run itself.
    const one = await world.fx.api.request<ListedRun>('GET', `${API}/runs/${runs[0]!.run_id}`);
    expect(res.body.data[2]).toEqual(one.body.data);
    // What the console links and shows.
    const first = res.body.data[2]!;
    expect(first).toMatchObject({
      agent_id: alice.id,
      agent_name: expect.stringMatching(/^agent-/) as string,
      conversation_id: conversation,
      model: 'gpt-test',
      usage: { input_tokens: 1000, output_tokens: 500 },
      // 1000 × 2 + 500 × 8 per million tokens.
      cost_usd: 0.006,
      pause: null,
      trace_id: expect.stringMatching(/^[0-9a-f]{32}$/) as string,
      workflow_id: `session/${alice.id}/${conversation}`,
      temporal_ui_url: expect.stringContaining(
        encodeURIComponent(`session/${alice.id}/${conversation}`),
      ) as string,
    });
    expect(Date.parse(first.started_at!)).toBeGreaterThanOrEqual(Date.parse(first.created_at));
    expect(first.duration_ms).toBe(Date.parse(first.finished_at!) - Date.parse(first.created_at));
    // Bob's model has no price, known or listed: no cost rather than a wrong one.
    expect(res.body.data[0]!.cost_usd).toBeNull();
    expect(res.body.data[1]).toMatchObject({
      status: 'failed',
      error: { code: 'model_bad_request' },
      duration_ms: expect.any(Number) as number,
    });
  });

  it("an agent's runs across its conversations, filtered by one or several statuses", async () => {
    const all = await list(`/agents/${alice.id}/runs`);
    expect(ids(all.body.data)).toEqual([runs[3]!.run_id, runs[1]!.run_id, runs[0]!.run_id]);
    const failed = await list(`/agents/${alice.id}/runs?status=failed`);
    expect(ids(failed.body.data)).toEqual([runs[1]!.run_id]);
    const completed = await list(`/agents/${alice.id}/runs?status=completed`);
    expect(ids(completed.body.data)).toEqual([runs[3]!.run_id, runs[0]!.run_id]);
    // Comma-separated and repeated mean the same.
    const both = await list(`/agents/${alice.id}/runs?status=failed,cancelled`);
    const repeated = await list(`/agents/${alice.id}/runs?status=failed&status=cancelled`);
    expect(ids(both.body.data)).toEqual([runs[1]!.run_id]);
    expect(ids(repeated.body.data)).toEqual([runs[1]!.run_id]);
    expect((await list(`/agents/${alice.id}/runs?status=awaiting_approval`)).body.data).toEqual([]);
  });

  it('pages with limit and offset, and bounds created_at with start_time/end_time', async () => {
    const page1 = await list(`/agents/${alice.id}/runs?limit=2`);
    const page2 = await list(`/agents/${alice.id}/runs?limit=2&offset=2`);
    expect([...ids(page1.body.data), ...ids(page2.body.data)]).toEqual([
      runs[3]!.run_id,
      runs[1]!.run_id,
      runs[0]!.run_id,
    ]);
    const since = encodeURIComponent(runs[1]!.created_at);
    const after = await list(`/agents/${alice.id}/runs?start_time=${since}`);
    expect(ids(after.body.data)).toEqual([runs[3]!.run_id, runs[1]!.run_id]);
    const before = await list(`/agents/${alice.id}/runs?end_time=${since}`);
    expect(ids(before.body.data)).toEqual([runs[0]!.run_id]);
  });

  it("a project's runs, optionally of one agent", async () => {
    const all = await list(`/runs?project_id=${world.fx.projectId}&status=completed,failed`);
    expect(ids(all.body.data)).toEqual(ids([...runs].reverse()));
    const bobs = await list(`/runs?project_id=${world.fx.projectId}&agent_id=${bob.id}`);
    expect(ids(bobs.body.data)).toEqual([runs[2]!.run_id]);
  });

  it('answers 400 naming the field for a bad status, limit or window', async () => {
    for (const query of ['status=done', 'status=failed,done', 'status=failed&status=nope', 'status=']) {
      const res = await list(`/agents/${alice.id}/runs?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.errorDetails.fields).toEqual([
        expect.objectContaining({
          field: 'status',
          message: expect.stringContaining('awaiting_approval') as string,
        }),
      ]);
    }
    const limit = await list(`/conversations/${conversation}/runs?limit=201`);
    expect(limit.body.errorDetails.fields?.map((f) => f.field)).toEqual(['limit']);
    const window = await list(
      `/agents/${alice.id}/runs?start_time=2026-02-01T00:00:00Z&end_time=2026-01-01T00:00:00Z`,
    );
    expect(window.status).toBe(400);
    expect(window.body.errorDetails.fields?.map((f) => f.field)).toEqual(['start_time']);
    const noProject = await list(`/runs`);
    expect(noProject.body.errorDetails.fields?.map((f) => f.field)).toEqual(['project_id']);
  });

  it('answers 404 for an unknown conversation, agent or project, and for an agent of another project', async () => {
    expect((await list(`/conversations/nope-${randomUUID()}/runs`)).status).toBe(404);
    expect((await list(`/agents/${randomUUID()}/runs`)).status).toBe(404);
    expect((await list(`/runs?project_id=${randomUUID()}`)).status).toBe(404);
    const other = await createProject(world.fx.api);
    const res = await list(`/agents/${alice.id}/runs?project_id=${other.id}`);
    expect(res.status).toBe(404);
    expect(res.body.data).toEqual({});
    expect((await list(`/conversations/${conversation}/runs?project_id=${other.id}`)).status).toBe(404);
    expect((await list(`/runs?project_id=${other.id}`)).body.data).toEqual([]);
  });

  it('a conversation id used in two projects needs project_id (400 naming it), and each project sees its own runs', async () => {
    const other = await createProject(world.fx.api);
    const created = await world.fx.api.request('POST', `${API}/conversations?project_id=${other.id}`, {
      id: conversation,
    });
    expect(created.status).toBe(200);
    const ambiguous = await list(`/conversations/${conversation}/runs`);
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.errorDetails.fields?.map((f) => f.field)).toEqual(['project_id']);
    expect((await list(`/conversations/${conversation}/runs?project_id=${other.id}`)).body.data).toEqual([]);
    const mine = await list(`/conversations/${conversation}/runs?project_id=${world.fx.projectId}`);
    expect(mine.body.data).toHaveLength(3);
  });
});
