/**
 * A model call costs the same wherever it is read, whether or not the
 * project has a virtual key: the run's `cost_usd`, the model span's
 * `gen_ai.usage.cost_usd`, the model statistics of the traces and the usage
 * series (calls without a key as their own group, under no key).
 */
import { describe, expect, it } from 'vitest';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { createModel, createVirtualKey } from '../../helpers/factories/config.js';
import { createPrompt } from '../../helpers/factories/content.js';
import { createProject, uniqueName } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import { waitFor, useSessionWorld, type RunData } from './session-harness.js';

/** USD per million tokens: 1,000 in and 2,000 out, so a call of 12 in and 3 out costs 0.018. */
const PRICING = { input_per_million_usd: 1_000, output_per_million_usd: 2_000 };
const costOf = (input: number, output: number) => (input * 1_000 + output * 2_000) / 1e6;

interface UsagePoint {
  virtual_key_id?: string | null;
  virtual_key_name?: string | null;
  requests: number;
  cost_usd: number;
}

describe.skipIf(noTemporal())('a model call costs the same with or without a virtual key', () => {
  const world = useSessionWorld();

  /**
   * An agent on a priced model of its own id (the metering caches each
   * provider and model's price for 30 s, and the statistics group by model),
   * in a new project, with a virtual key or without.
   */
  async function pricedAgent(keyed: boolean, summarizing = false) {
    const key = keyed
      ? await createVirtualKey(world.fx.api, {
          providers: [{ provider_id: world.fx.providerId, model_names: ['*'] }],
        })
      : undefined;
    const project = await createProject(world.fx.api, key ? { virtual_key_id: key.id } : {});
    const modelId = uniqueName('gpt-priced');
    const model = await createModel(world.fx.api, project.id, {
      provider_id: world.fx.providerId,
      model_id: modelId,
      pricing: PRICING,
    });
    const prompt = await createPrompt(world.fx.api, project.id, { template: 'Be brief.' });
    const summarizer = summarizing
      ? {
          summarizer_type: 'llm',
          llm_summarizer_token_threshold: 50,
          llm_summarizer_keep_recent_count: 1,
          llm_summarizer_prompt_id: (await createPrompt(world.fx.api, project.id, { template: 'Summarize.' }))
            .id,
        }
      : {};
    const agent = await world.fx.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/agents?project_id=${project.id}`,
      { name: uniqueName('agent'), model_id: model.id, prompt_id: prompt.id, ...summarizer },
    );
    expect(agent.status, agent.text).toBe(200);
    return { projectId: project.id, agentId: agent.body.data.id, modelId, key };
  }

  async function converse(
    a: { projectId: string; agentId: string },
    message: string,
    conversationId?: string,
  ): Promise<RunData & { cost_usd: number | null }> {
    const res = await world.fx.api.request<RunData & { cost_usd: number | null }>(
      'POST',
      `/api/agent-server/converse?project_id=${a.projectId}`,
      { agent_id: a.agentId, message, ...(conversationId ? { conversation_id: conversationId } : {}) },
    );
    expect(res.body.data.status, res.text).toBe('completed');
    return res.body.data;
  }

  /** The costs on the model spans of the trace, once `count` of them are stored. */
  async function spanCosts(traceId: string, modelId: string, count: number): Promise<unknown[]> {
    return waitFor(
      async () => {
        await currentTelemetry()?.flush();
        const spans = await world.fx.api.server.deps
          .db('spans')
          .where({ trace_id: traceId, name: `chat ${modelId}` })
          .select<Array<{ attributes: Record<string, unknown> }>>('attributes');
        return spans.length >= count ? spans.map((s) => s.attributes['gen_ai.usage.cost_usd']) : undefined;
      },
      20_000,
      'the model spans',
    );
  }

  /** The project's model statistics for the model, once its calls are counted. */
  async function modelStats(projectId: string, modelId: string, calls: number) {
    return waitFor(
      async () => {
        await currentTelemetry()?.flush();
        const res = await world.fx.api.request<
          Array<{ model: string; call_count: number; cost_usd: number | null }>
        >('GET', `/api/agent-server/traces/stats/models?project_id=${projectId}`);
        const row = res.body.data.find((r) => r.model === modelId);
        return row && row.call_count >= calls ? row : undefined;
      },
      20_000,
      'the model statistics',
    );
  }

  /** The model's usage series, one group per key, keeping the groups with calls. */
  async function usageByKey(modelId: string): Promise<UsagePoint[]> {
    const res = await world.fx.api.request<{ buckets: UsagePoint[]; totals: UsagePoint }>(
      'GET',
      `/api/agent-server/usage?group_by=key&model=${encodeURIComponent(modelId)}`,
    );
    expect(res.status, res.text).toBe(200);
    return res.body.data.buckets.filter((b) => b.requests > 0);
  }

  for (const keyed of [false, true])
    it(`${keyed ? 'with' : 'without'} a virtual key: the run, the span, the trace statistics and the usage show one cost`, async () => {
      const agent = await pricedAgent(keyed);
      world.fx.vendor.script({ reply: { text: 'priced', usage: { input: 12, output: 3 } } });
      const run = await converse(agent, 'hi');
      const cost = costOf(12, 3);

      expect(run.cost_usd).toBeCloseTo(cost, 8);
      const [spanCost] = await spanCosts(run.trace_id!, agent.modelId, 1);
      expect(spanCost).toBeCloseTo(cost, 8);
      const stats = await modelStats(agent.projectId, agent.modelId, 1);
      expect(stats).toMatchObject({ call_count: 1 });
      expect(stats.cost_usd).toBeCloseTo(cost, 6);

      const groups = await usageByKey(agent.modelId);
      expect(groups).toHaveLength(1);
      expect(groups[0]).toMatchObject(
        keyed
          ? { virtual_key_id: agent.key!.id, virtual_key_name: agent.key!.name, requests: 1 }
          : { virtual_key_id: null, virtual_key_name: null, requests: 1 },
      );
      expect(groups[0]!.cost_usd).toBeCloseTo(cost, 8);
    });

  it("without a virtual key: a summary's model call is priced and counted with its run", async () => {
    const agent = await pricedAgent(false, true);
    world.fx.vendor.script(
      { reply: { text: 'r1', usage: { input: 60, output: 1 } } },
      // The second turn starts with 60 reported input tokens ≥ 50: the summarizer call comes first.
      { reply: { text: 'S: the user said m1', usage: { input: 30, output: 8 } } },
      { reply: { text: 'r2', usage: { input: 20, output: 1 } } },
    );
    const first = await converse(agent, 'm1');
    const second = await converse(agent, 'm2', first.conversation_id);
    expect(world.fx.vendor.received).toHaveLength(3);

    const cost = costOf(30, 8) + costOf(20, 1);
    expect(second.usage).toEqual({ input_tokens: 50, output_tokens: 9 });
    expect(second.cost_usd).toBeCloseTo(cost, 8);
    const spans = await spanCosts(second.trace_id!, agent.modelId, 2);
    expect((spans as number[]).reduce((a, b) => a + b, 0)).toBeCloseTo(cost, 8);

    const groups = await usageByKey(agent.modelId);
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatchObject({ virtual_key_id: null, requests: 3 });
    expect(groups[0]!.cost_usd).toBeCloseTo(first.cost_usd! + cost, 8);
  });
});
