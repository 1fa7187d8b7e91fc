/**
 * Converse `overrides`: one turn runs with another prompt version, model or
 * model parameters than its agent's, without moving a prompt label or
 * changing the agent; ids that are not the project's are 400s naming the
 * field.
 */
import { describe, expect, it } from 'vitest';
import { createProject } from '../../helpers/factories.js';
import { createModel, createProvider } from '../../helpers/factories/config.js';
import { createPrompt, PROMPTS, type PromptVersionData } from '../../helpers/factories/content.js';
import { noTemporal } from '../../helpers/services.js';
import { sentMessages, useSessionWorld } from './session-harness.js';

interface RunWithOverrides {
  status: string;
  prompt_version_id: string | null;
  model: string | null;
  overrides: Record<string, unknown> | null;
  conversation_id: string;
}

describe.skipIf(noTemporal())('converse overrides', () => {
  const world = useSessionWorld();

  async function versions(promptName: string): Promise<PromptVersionData[]> {
    const res = await world.fx.api.request<PromptVersionData[]>(
      'GET',
      `${PROMPTS}/${promptName}/versions?project_id=${world.fx.projectId}`,
    );
    expect(res.status).toBe(200);
    return res.body.data;
  }

  /** An agent on `production` (v1) of a prompt whose v2 carries only `latest`. */
  async function agentWithTwoVersions() {
    const agent = await world.fx.agent({ prompt_label: 'production' }, 'You are version one.', {
      label: 'production',
    });
    const v2 = await world.fx.api.request<PromptVersionData>(
      'POST',
      `${PROMPTS}/${agent.promptName}/versions?project_id=${world.fx.projectId}`,
      { template: 'You are version two.', commit_message: 'second' },
    );
    expect(v2.status).toBe(200);
    const v1 = (await versions(agent.promptName)).find((v) => v.version === 1)!;
    return { agent, v1, v2: v2.body.data };
  }

  it('runs a turn with another prompt version; the label stays where it was and the next turn runs it again', async () => {
    const { agent, v1, v2 } = await agentWithTwoVersions();
    world.fx.vendor.script({ reply: { text: 'two' } }, { reply: { text: 'one' } });

    const tried = await world.fx.converse({
      agent_id: agent.id,
      message: 'Which version?',
      overrides: { prompt_version_id: v2.id },
    });
    expect(tried.status).toBe(200);
    const run = tried.body.data as unknown as RunWithOverrides;
    expect(run).toMatchObject({
      status: 'completed',
      prompt_version_id: v2.id,
      overrides: { prompt_version_id: v2.id },
    });
    expect(sentMessages(world.fx.vendor, 0)[0]).toEqual({ role: 'system', content: 'You are version two.' });

    // The label did not move: `production` is still v1, and a turn without overrides runs it.
    const after = await versions(agent.promptName);
    expect(after.find((v) => v.labels.includes('production'))?.id).toBe(v1.id);
    const next = await world.fx.converse({
      agent_id: agent.id,
      conversation_id: run.conversation_id,
      message: 'And now?',
    });
    expect(next.body.data as unknown as RunWithOverrides).toMatchObject({
      status: 'completed',
      prompt_version_id: v1.id,
      overrides: null,
    });
    expect(sentMessages(world.fx.vendor, 1)[0]).toEqual({ role: 'system', content: 'You are version one.' });

    // The run view (GET) shows the overrides the turn used.
    const view = await world.fx.api.request<RunWithOverrides>(
      'GET',
      `/api/agent-server/runs/${(tried.body.data as { run_id: string }).run_id}`,
    );
    expect(view.body.data.overrides).toEqual({ prompt_version_id: v2.id });
  });

  it("takes a version of another of the project's prompts, another model, and parameters merged over the model's", async () => {
    const agent = await world.fx.agent({}, 'You are the agent prompt.');
    const other = await createPrompt(world.fx.api, world.fx.projectId, {
      template: 'You are another prompt.',
    });
    const otherVersion = (await versions(other.name))[0]!;
    const model = await createModel(world.fx.api, world.fx.projectId, {
      provider_id: world.fx.providerId,
      model_id: 'gpt-other',
      parameters: { temperature: 0.1, top_p: 0.5 },
    });
    world.fx.vendor.script({ reply: { text: 'ok' } });

    const res = await world.fx.converse({
      agent_id: agent.id,
      message: 'Hi',
      overrides: {
        prompt_version_id: otherVersion.id,
        model_id: model.id,
        parameters: { temperature: 0.7, max_tokens: 50 },
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.data as unknown as RunWithOverrides).toMatchObject({
      status: 'completed',
      model: 'gpt-other',
      prompt_version_id: otherVersion.id,
    });
    const sent = world.fx.vendor.received[0]!.body;
    // OpenAI's wire name for max_tokens.
    expect(sent).toMatchObject({
      model: 'gpt-other',
      temperature: 0.7,
      top_p: 0.5,
      max_completion_tokens: 50,
    });
    expect(sentMessages(world.fx.vendor, 0)[0]).toEqual({
      role: 'system',
      content: 'You are another prompt.',
    });
  });

  it('makes overrides part of what a message_id stands for: a retry with others is a 409', async () => {
    const agent = await world.fx.agent();
    world.fx.vendor.script({ reply: { text: 'once' } });
    const body = {
      agent_id: agent.id,
      message: 'Hi',
      message_id: 'tried-once',
      overrides: { parameters: { temperature: 0.5 } },
    };
    const first = await world.fx.converse(body);
    expect(first.status).toBe(200);
    const conversation_id = first.body.data.conversation_id;
    const again = await world.fx.converse({ ...body, conversation_id });
    expect(again.status).toBe(200);
    expect(again.body.data.run_id).toBe(first.body.data.run_id);
    const other = await world.fx.converse({ ...body, conversation_id, overrides: undefined });
    expect(other.status).toBe(409);
    expect(world.fx.vendor.received).toHaveLength(1);
  });

  it('answers 400 naming the field for ids that are not the project’s, a model without a provider, bad parameters', async () => {
    const agent = await world.fx.agent();
    const elsewhere = await createProject(world.fx.api);
    const foreignModel = await createModel(world.fx.api, elsewhere.id, {
      provider_id: (await createProvider(world.fx.api)).id,
    });
    const foreignPrompt = await createPrompt(world.fx.api, elsewhere.id);
    const foreignVersion = (
      await world.fx.api.request<PromptVersionData[]>(
        'GET',
        `${PROMPTS}/${foreignPrompt.name}/versions?project_id=${elsewhere.id}`,
      )
    ).body.data[0]!;
    // A model created while no provider of its type existed has none (agents cannot call it).
    const unprovided = await createModel(world.fx.api, world.fx.projectId, {
      provider_id: world.fx.providerId,
    });
    await world.fx.api.server.deps.db('models').where({ id: unprovided.id }).update({ provider_id: null });

    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ model_id: foreignModel.id }, 'overrides.model_id', /existing model in this project/],
      [{ model_id: '7a1e3c1e-0000-4000-8000-000000000000' }, 'overrides.model_id', /existing model/],
      [{ model_id: unprovided.id }, 'overrides.model_id', /has no provider/],
      [{ prompt_version_id: foreignVersion.id }, 'overrides.prompt_version_id', /prompt of this project/],
      [{ prompt_version_id: 'not-a-uuid' }, 'overrides.prompt_version_id', /GUID|uuid/i],
      [{ parameters: { temperature: 5 } }, 'overrides.parameters.temperature', /less than or equal to 2/],
      [{ model: 'x' }, 'overrides.model', /not allowed/],
      [{}, 'overrides', /at least 1/],
    ];
    for (const [overrides, field, message] of cases) {
      const res = await world.fx.converse({ agent_id: agent.id, message: 'Hi', overrides });
      expect(res.status, JSON.stringify(overrides)).toBe(400);
      const fields = (res.body.errorDetails as { fields: Array<{ field: string; message: string }> }).fields;
      expect(fields.map((f) => f.field)).toEqual([field]);
      expect(fields[0]!.message).toMatch(message);
    }
    // Nothing was stored or run.
    expect(world.fx.vendor.received).toHaveLength(0);
  });
});
