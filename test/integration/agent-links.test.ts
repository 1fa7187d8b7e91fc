/**
 * What an agent opens to others and hands tasks to: `expose` (the MCP server
 * and A2A doors, both closed by default) and `sub_agents` (other agents of
 * its project, each checked when the agent is saved: one that does not exist
 * or is in another project, the agent itself, or a chain leading back to it,
 * is a 400 naming the field). An agent another one lists cannot be deleted
 * (409 naming who lists it). Real API, real PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName } from '../helpers/factories.js';
import { createModel } from '../helpers/factories/config.js';
import { createPrompt } from '../helpers/factories/content.js';

const A = '/api/agent-server/agents';

interface Linked {
  id: string;
  name: string;
  expose: { mcp: boolean; a2a: boolean };
  sub_agents: Array<{ agent_id: string; description?: string | null }>;
}
type FieldErrors = { fields?: Array<{ field: string; message: string }> };

describe('agents: exposure and sub-agents', () => {
  let api: TestApi;
  let projectId: string;
  let base: { model_id: string; prompt_id: string };

  beforeAll(async () => {
    api = await startTestApi();
    projectId = (await createProject(api)).id;
    base = {
      model_id: (await createModel(api, projectId)).id,
      prompt_id: (await createPrompt(api, projectId, { template: 'You help.' })).id,
    };
  });
  afterAll(async () => {
    await api.close();
  });

  const create = async (body: Record<string, unknown> = {}, project = projectId) => {
    const res = await api.request<Linked>('POST', `${A}?project_id=${project}`, {
      name: uniqueName('agent'),
      ...base,
      ...body,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data;
  };
  const patch = (id: string, body: Record<string, unknown>) =>
    api.request<Linked>('PATCH', `${A}/${id}?project_id=${projectId}`, body);
  const fieldsOf = (body: unknown) => (body as { errorDetails: FieldErrors }).errorDetails.fields ?? [];

  it('exposes nothing by default; expose.mcp and expose.a2a are stored, returned and kept in versions', async () => {
    const agent = await create();
    expect(agent.expose).toEqual({ mcp: false, a2a: false });
    expect(agent.sub_agents).toEqual([]);
    const exposed = await patch(agent.id, { expose: { mcp: true } });
    expect(exposed.status).toBe(200);
    expect(exposed.body.data.expose).toEqual({ mcp: true, a2a: false });
    const again = await api.request<Linked>('GET', `${A}/${agent.id}`);
    expect(again.body.data.expose).toEqual({ mcp: true, a2a: false });
    // Pinning version 1 closes the door again.
    const pinned = await api.request<Linked>(
      'POST',
      `${A}/${agent.id}/versions/1/pin?project_id=${projectId}`,
    );
    expect(pinned.status).toBe(200);
    expect(pinned.body.data.expose).toEqual({ mcp: false, a2a: false });

    const bad = await patch(agent.id, { expose: { mcp: 'yes', smtp: true } });
    expect(bad.status).toBe(400);
    expect(fieldsOf(bad.body).map((f) => f.field)).toEqual(
      expect.arrayContaining(['expose.mcp', 'expose.smtp']),
    );
  });

  it('lists sub-agents of the same project; refuses a missing one, another project’s, itself, and duplicates', async () => {
    const helper = await create({ description: 'Looks things up.' });
    const lead = await create({ sub_agents: [{ agent_id: helper.id, description: 'Ask it for facts.' }] });
    // requires_approval defaults to false: each call runs without asking anyone.
    expect(lead.sub_agents).toEqual([
      { agent_id: helper.id, description: 'Ask it for facts.', requires_approval: false },
    ]);

    const elsewhere = await createProject(api);
    const stranger = await create(
      {
        model_id: (await createModel(api, elsewhere.id)).id,
        prompt_id: (await createPrompt(api, elsewhere.id, { template: 'x' })).id,
      },
      elsewhere.id,
    );
    const cases: Array<[unknown, string, RegExp]> = [
      [
        [{ agent_id: stranger.id }],
        'sub_agents.0.agent_id',
        /does not name an existing agent in this project/,
      ],
      [[{ agent_id: '00000000-0000-4000-8000-000000000000' }], 'sub_agents.0.agent_id', /existing agent/],
      [[{ agent_id: lead.id }], 'sub_agents.0.agent_id', /its own sub-agent/],
      [[{ agent_id: helper.id }, { agent_id: helper.id }], 'sub_agents.1', /duplicate/],
      [[{ agent_id: 'not-a-uuid' }], 'sub_agents.0.agent_id', /GUID|uuid/i],
    ];
    for (const [subAgents, field, message] of cases) {
      const res = await patch(lead.id, { sub_agents: subAgents });
      expect(res.status, JSON.stringify(subAgents)).toBe(400);
      const problem = fieldsOf(res.body).find((f) => f.field === field);
      expect(problem?.message, JSON.stringify(res.body)).toMatch(message);
    }
    // Nothing was written.
    const unchanged = await api.request<Linked>('GET', `${A}/${lead.id}`);
    expect(unchanged.body.data.sub_agents).toEqual([
      { agent_id: helper.id, description: 'Ask it for facts.', requires_approval: false },
    ]);
  });

  it('refuses a cycle when the agent is saved, naming sub_agents and the chain', async () => {
    const c = await create();
    const b = await create({ sub_agents: [{ agent_id: c.id }] });
    const a = await create({ sub_agents: [{ agent_id: b.id }] });
    const closing = await patch(c.id, { sub_agents: [{ agent_id: a.id }] });
    expect(closing.status).toBe(400);
    const [problem] = fieldsOf(closing.body);
    expect(problem?.field).toBe('sub_agents');
    expect(problem?.message).toBe(
      `sub_agents would make a cycle: ${c.name} → ${a.name} → ${b.name} → ${c.name}`,
    );
    // A diamond is no cycle: a → b → c and a → c.
    const diamond = await patch(a.id, { sub_agents: [{ agent_id: b.id }, { agent_id: c.id }] });
    expect(diamond.status).toBe(200);
  });

  it('an agent another lists cannot be deleted (409 naming who lists it) until it is unlisted', async () => {
    const helper = await create();
    const lead = await create({ sub_agents: [{ agent_id: helper.id }] });
    const refused = await api.request('DELETE', `${A}/${helper.id}?project_id=${projectId}`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      errorDetails: { referenced_by: [{ type: 'agent', id: lead.id, name: lead.name }] },
    });
    expect((await patch(lead.id, { sub_agents: [] })).status).toBe(200);
    const deleted = await api.request('DELETE', `${A}/${helper.id}?project_id=${projectId}`);
    expect([200, 204]).toContain(deleted.status);
  });
});
