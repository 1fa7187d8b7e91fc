import { describe, expect, it } from 'vitest';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { createModel, createVirtualKey } from '../../helpers/factories/config.js';
import { createPrompt } from '../../helpers/factories/content.js';
import { uniqueName } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import { useSessionWorld, waitFor } from '../sessions/session-harness.js';

interface Row {
  name: string;
  service_name: string;
  project_id: string | null;
  agent_id: string | null;
  conversation_id: string | null;
  attributes: Record<string, unknown>;
}

/**
 * Every span a turn makes in the worker (its workflow's, its activities', the
 * model call's and whatever runs inside them) names the turn's project, agent
 * and conversation, so the trace list's filters find the turn however it ended.
 */
describe.skipIf(noTemporal())('a turn names its agent on every span', () => {
  const world = useSessionWorld();
  const db = () => world.fx.api.server.deps.db;

  const listed = async (filter: string) =>
    (
      await world.fx.api.request<Array<{ trace_id: string }>>('GET', `/api/agent-server/traces?${filter}`)
    ).body.data.map((t) => t.trace_id);

  async function turnSpans(traceId: string): Promise<Row[]> {
    return waitFor(
      async () => {
        await currentTelemetry()?.flush();
        const spans = await db()('spans').where({ trace_id: traceId }).select<Row[]>('*');
        const names = spans.map((s) => s.name);
        return names.includes('RunActivity:finishTurn') &&
          names.includes('StartActivity:finishTurn') &&
          names.includes('RunActivity:callModel')
          ? spans
          : undefined;
      },
      20_000,
      'the failed turn spans',
    );
  }

  it('finds a failed turn by its agent, and each of its worker spans carries the turn', async () => {
    const agent = await world.fx.agent({}, 'Be brief.');
    world.fx.vendor.script({ error: { status: 400, message: 'no such thing' } });
    const turn = (await world.fx.converse({ agent_id: agent.id, message: 'hello' })).body.data;
    expect(turn.status).toBe('failed');
    const traceId = turn.trace_id!;

    const spans = await turnSpans(traceId);
    const worker = spans.filter((s) => s.service_name === 'agent-server-worker');
    const names = worker.map((s) => s.name).join(', ');
    expect(worker.length, names).toBeGreaterThan(3);
    for (const s of worker) {
      expect({ name: s.name, agent: s.agent_id }).toEqual({ name: s.name, agent: agent.id });
      expect({ name: s.name, conversation: s.conversation_id }).toEqual({
        name: s.name,
        conversation: turn.conversation_id,
      });
      expect({ name: s.name, project: s.project_id }).toEqual({ name: s.name, project: world.fx.projectId });
    }
    // The converse request and the Update it sends name the turn too (the api's part).
    for (const name of ['POST /api/agent-server/converse', 'UpdateWithStartWorkflow:converse'])
      expect(spans.find((s) => s.name === name)?.agent_id, name).toBe(agent.id);
    // The database queries of the turn's activities are the turn's too.
    expect(worker.some((s) => s.name.startsWith('pg.') || s.attributes['db.system'] === 'postgresql')).toBe(
      true,
    );

    expect(await listed(`agent_id=${agent.id}`)).toContain(traceId);
    expect(await listed(`conversation_id=${turn.conversation_id}`)).toContain(traceId);
  });

  it('finds a turn that failed before calling the model (its key does not grant the model) by its agent and project', async () => {
    const key = await createVirtualKey(world.fx.api, {
      providers: [{ provider_id: world.fx.providerId, model_names: ['other-model'] }],
    });
    const project = await world.fx.api.request<{ id: string }>('POST', '/api/agent-server/projects', {
      name: uniqueName('narrow'),
      virtual_key_id: key.id,
    });
    const projectId = project.body.data.id;
    const model = await createModel(world.fx.api, projectId, {
      provider_id: world.fx.providerId,
      model_id: 'gpt-test',
    });
    const prompt = await createPrompt(world.fx.api, projectId, { template: 'Be brief.' });
    const agent = await world.fx.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/agents?project_id=${projectId}`,
      { name: uniqueName('agent'), model_id: model.id, prompt_id: prompt.id },
    );
    const agentId = agent.body.data.id;
    const turn = await world.fx.api.request<{ status: string; trace_id: string; conversation_id: string }>(
      'POST',
      `/api/agent-server/converse?project_id=${projectId}`,
      { agent_id: agentId, message: 'hi' },
    );
    expect(turn.body.data.status).toBe('failed');
    expect(world.fx.vendor.received).toHaveLength(0);
    const traceId = turn.body.data.trace_id;
    await turnSpans(traceId);
    expect(await listed(`agent_id=${agentId}`)).toContain(traceId);
    expect(await listed(`project_id=${projectId}`)).toContain(traceId);
  });
});
