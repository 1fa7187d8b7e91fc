/**
 * Agent versions: every write of an agent is a version (all its settings),
 * listed newest first; a version can be put back in force without making a
 * new one (refused, naming the field, when what it names is gone); a run
 * records the version its turn ran with. The agent's own `context` gives its
 * prompt's variables defaults under the conversation's.
 */
import { describe, expect, it } from 'vitest';
import { uniqueName } from '../helpers/factories.js';
import { createModel, MODELS } from '../helpers/factories/config.js';
import { noTemporal } from '../helpers/services.js';
import { sentMessages, useSessionWorld, type RunData } from './sessions/session-harness.js';

const AGENTS = '/api/agent-server/agents';

interface AgentData {
  id: string;
  name: string;
  description: string | null;
  model_id: string;
  version: number;
  metadata: Record<string, unknown>;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  graph_id: string | null;
  max_iterations: number;
  warnings: string[];
}

interface VersionData {
  agent_id: string;
  version: number;
  in_force: boolean;
  settings: Record<string, unknown>;
  created_at: string;
}

type ErrorBody = { errorDetails: { fields?: Array<{ field: string; message: string }> } };

describe.skipIf(noTemporal())('agent versions', () => {
  const world = useSessionWorld();
  const api = () => world.fx.api;

  async function getAgent(id: string): Promise<AgentData> {
    const res = await api().request<AgentData>('GET', `${AGENTS}/${id}`);
    expect(res.status).toBe(200);
    return res.body.data;
  }

  async function patch(id: string, body: Record<string, unknown>): Promise<AgentData> {
    const res = await api().request<AgentData>('PATCH', `${AGENTS}/${id}`, body);
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  }

  async function versions(id: string, query = ''): Promise<VersionData[]> {
    const res = await api().request<VersionData[]>('GET', `${AGENTS}/${id}/versions${query}`);
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  }

  const pin = (id: string, version: number) =>
    api().request<AgentData>('POST', `${AGENTS}/${id}/versions/${version}/pin`);

  it('starts at version 1 with empty metadata, config and context, and no graph', async () => {
    const { id } = await world.fx.agent();
    const agent = await getAgent(id);
    expect(agent).toMatchObject({ version: 1, metadata: {}, config: {}, context: {}, graph_id: null });
    const list = await versions(id);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ agent_id: id, version: 1, in_force: true });
    expect(list[0]!.settings).toMatchObject({ name: agent.name, model_id: agent.model_id, metadata: {} });
  });

  it('makes a version of every update, lists them newest first and pages them', async () => {
    const { id } = await world.fx.agent();
    const v2 = await patch(id, { description: 'second', metadata: { team: 'blue' } });
    expect(v2).toMatchObject({ version: 2, description: 'second', metadata: { team: 'blue' } });
    const v3 = await patch(id, { max_iterations: 7, config: { recursion_limit: 5 } });
    expect(v3).toMatchObject({ version: 3, max_iterations: 7, config: { recursion_limit: 5 } });
    // A partial update keeps the rest: metadata is still there.
    expect(v3.metadata).toEqual({ team: 'blue' });

    const list = await versions(id);
    expect(list.map((v) => [v.version, v.in_force])).toEqual([
      [3, true],
      [2, false],
      [1, false],
    ]);
    expect(list[1]!.settings).toMatchObject({ description: 'second', max_iterations: 20 });
    expect(list[0]!.settings).toMatchObject({ description: 'second', max_iterations: 7 });

    const page = await versions(id, '?limit=1&offset=1');
    expect(page.map((v) => v.version)).toEqual([2]);
    const tooMany = await api().request('GET', `${AGENTS}/${id}/versions?limit=201`);
    expect(tooMany.status).toBe(400);
  });

  it('pins an earlier version without making a new one; the next update is a new version after the highest', async () => {
    const { id } = await world.fx.agent({ description: 'first' });
    await patch(id, { description: 'second', context: { role: 'a pirate' } });

    const pinned = await pin(id, 1);
    expect(pinned.status, pinned.text).toBe(200);
    expect(pinned.body.data).toMatchObject({ version: 1, description: 'first', context: {} });
    expect(await getAgent(id)).toMatchObject({ version: 1, description: 'first' });
    const list = await versions(id);
    expect(list.map((v) => [v.version, v.in_force])).toEqual([
      [2, false],
      [1, true],
    ]);

    // Pinning the version in force changes nothing.
    expect((await pin(id, 1)).body.data).toMatchObject({ version: 1, description: 'first' });

    const next = await patch(id, { description: 'third' });
    expect(next.version).toBe(3);
  });

  it('refuses an unknown version (404), a version whose model is gone (400 naming model_id), and a taken name (409)', async () => {
    const { id } = await world.fx.agent();
    expect((await pin(id, 9)).status).toBe(404);
    expect((await pin(crypto.randomUUID(), 1)).status).toBe(404);

    // Version 1 names the fixture's model; move the agent to another model, then delete the first one.
    const first = await createModel(api(), world.fx.projectId, { provider_id: world.fx.providerId });
    await patch(id, { model_id: first.id });
    const second = await createModel(api(), world.fx.projectId, { provider_id: world.fx.providerId });
    await patch(id, { model_id: second.id });
    const deleted = await api().request('DELETE', `${MODELS}/${first.id}`);
    expect(deleted.status, deleted.text).toBe(200);

    const refused = await pin(id, 2);
    expect(refused.status).toBe(400);
    const fields = (refused.body as unknown as ErrorBody).errorDetails.fields ?? [];
    expect(fields.map((f) => f.field)).toContain('model_id');
    expect((await getAgent(id)).model_id).toBe(second.id);

    // Version 1's name is now another agent's.
    const v1Name = (await versions(id))[2]!.settings.name as string;
    await patch(id, { name: uniqueName('renamed') });
    await world.fx.agent({ name: v1Name });
    expect((await pin(id, 1)).status).toBe(409);
  });

  it('takes metadata, config and context as objects only, naming the field', async () => {
    const { id } = await world.fx.agent();
    for (const [field, value] of [
      ['metadata', 'x'],
      ['config', [1]],
      ['context', { 'not a name': 1 }],
    ] as const) {
      const res = await api().request('PATCH', `${AGENTS}/${id}`, { [field]: value });
      expect(res.status).toBe(400);
      const fields = (res.body as unknown as ErrorBody).errorDetails.fields ?? [];
      expect(fields.map((f) => f.field.split('.')[0])).toContain(field);
    }
    expect((await getAgent(id)).version).toBe(1);
  });

  it("records the agent version a run used, and renders the agent's context under the conversation's", async () => {
    const { id } = await world.fx.agent({}, 'You are {{role}} from {{place}}.');
    world.fx.vendor.script(
      { reply: { text: 'one' } },
      { reply: { text: 'two' } },
      { reply: { text: 'three' } },
    );

    const first = await world.fx.converse({ agent_id: id, message: 'Hi' });
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toMatchObject({ status: 'completed', agent_version: 1 });
    expect(sentMessages(world.fx.vendor, 0)[0]).toEqual({ role: 'system', content: 'You are  from .' });

    // The agent is warned about variables nothing gives a value, until its own context gives them.
    expect((await getAgent(id)).warnings.join(' ')).toMatch(/\{\{role\}\}, \{\{place\}\}/);
    const given = await patch(id, { context: { role: 'a pirate', place: 'the sea' } });
    expect(given.warnings.join(' ')).not.toMatch(/\{\{/);
    const second = await world.fx.converse({ agent_id: id, message: 'Hi again' });
    expect(second.body.data).toMatchObject({ status: 'completed', agent_version: 2 });
    expect(sentMessages(world.fx.vendor, 1)[0]).toEqual({
      role: 'system',
      content: 'You are a pirate from the sea.',
    });
    expect(second.body.data.warnings).toEqual([]);

    // The conversation's context wins over the agent's; the run view shows the version too.
    const third = await world.fx.converse({
      agent_id: id,
      conversation_id: second.body.data.conversation_id,
      message: 'And now?',
      context: { role: 'a parrot' },
    });
    expect(third.body.data).toMatchObject({ status: 'completed', agent_version: 2 });
    expect(sentMessages(world.fx.vendor, 2)[0]).toEqual({
      role: 'system',
      content: 'You are a parrot from the sea.',
    });
    const view = await api().request<RunData & { agent_version: number }>(
      'GET',
      `/api/agent-server/runs/${first.body.data.run_id}`,
    );
    expect(view.body.data.agent_version).toBe(1);
  });
});
