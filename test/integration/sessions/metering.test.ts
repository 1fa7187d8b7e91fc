import { describe, expect, it } from 'vitest';
import { createModel, createVirtualKey } from '../../helpers/factories/config.js';
import { createPrompt } from '../../helpers/factories/content.js';
import { uniqueName } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import { billsAsWritten } from '../../fixtures/vendors/scripted-server.js';
import { readSse, waitFor, useSessionWorld } from './session-harness.js';

const skip = noTemporal();

describe.skipIf(skip)(
  "converse: the project's virtual key, content parts, Accept-negotiated streaming",
  () => {
    const world = useSessionWorld();

    /** An agent on a priced model, in a project metered by a key with these limits. */
    async function meteredAgent(
      key: Record<string, unknown>,
      pricing: Record<string, number> = { input_per_million_usd: 1_000, output_per_million_usd: 1_000 },
      modelId = 'gpt-test',
      modelFields: Record<string, unknown> = {},
    ) {
      const vk = await createVirtualKey(world.fx.api, key);
      const project = await world.fx.api.request<{ id: string }>('POST', '/api/agent-server/projects', {
        name: uniqueName('metered'),
        virtual_key_id: vk.id,
      });
      const projectId = project.body.data.id;
      const model = await createModel(world.fx.api, projectId, {
        provider_id: world.fx.providerId,
        model_id: modelId,
        pricing,
        ...modelFields,
      });
      const prompt = await createPrompt(world.fx.api, projectId, { template: 'Be brief.' });
      const agent = await world.fx.api.request<{ id: string }>(
        'POST',
        `/api/agent-server/agents?project_id=${projectId}`,
        {
          name: uniqueName('agent'),
          model_id: model.id,
          prompt_id: prompt.id,
        },
      );
      return { projectId, agentId: agent.body.data.id, keyId: vk.id };
    }

    it("records the agent's model calls in the key's usage, and a budget that cannot cover a call makes the turn wait", async () => {
      const ok = await meteredAgent({
        providers: [{ provider_id: world.fx.providerId, model_names: ['*'] }],
      });
      world.fx.vendor.script({ reply: { text: 'metered', usage: { input: 12, output: 3 } } });
      const res = await world.fx.api.request<{ status: string }>(
        'POST',
        `/api/agent-server/converse?project_id=${ok.projectId}`,
        {
          agent_id: ok.agentId,
          message: 'hi',
        },
      );
      expect(res.body.data.status).toBe('completed');
      const usage = await waitFor(async () => {
        const u = await world.fx.api.request<{
          totals: { requests: number; input_tokens: number; output_tokens: number };
        }>('GET', `/api/agent-server/virtual-keys/${ok.keyId}/usage`);
        return u.body.data.totals.requests === 1 ? u.body.data.totals : undefined;
      });
      expect(usage).toMatchObject({ input_tokens: 12, output_tokens: 3 });

      const broke = await meteredAgent(
        {
          providers: [{ provider_id: world.fx.providerId, model_names: ['*'] }],
          budget: { max_usd: 0.000001, period: 'day' },
        },
        undefined,
        // Its own model id: the metering caches each provider and model's limits for 30 s.
        'gpt-test-budgeted',
        { max_output_tokens: 1_000 },
      );
      const refused = await world.fx.api.request<{
        run_id: string;
        status: string;
        pause: { reason: string; details: Record<string, unknown> };
      }>('POST', `/api/agent-server/converse?project_id=${broke.projectId}`, {
        agent_id: broke.agentId,
        message: 'hi',
      });
      expect(refused.status).toBe(200);
      expect(refused.body.data.status).toBe('awaiting_budget');
      expect(refused.body.data.pause).toMatchObject({
        reason: 'budget',
        details: { scope: 'key', id: broke.keyId, max_usd: 0.000001, period: 'day' },
      });
      expect(world.fx.vendor.received).toHaveLength(1);
      const cancelled = await world.fx.api.request<{ status: string }>(
        'POST',
        `/api/agent-server/runs/${refused.body.data.run_id}/budget`,
        { action: 'cancel' },
      );
      expect(cancelled.body.data.status).toBe('cancelled');
    });

    it("a turn whose model sets no max_tokens is reserved at the model's output ceiling, never overspending", async () => {
      // The vendor writes all it may: 100,000 tokens at 10 USD per million is 1 USD, over the 0.5 USD budget.
      world.fx.vendor.billing = billsAsWritten(100_000);
      try {
        const agent = await meteredAgent(
          {
            providers: [{ provider_id: world.fx.providerId, model_names: ['*'] }],
            budget: { max_usd: 0.5, period: 'day' },
          },
          { input_per_million_usd: 10, output_per_million_usd: 10 },
          'gpt-long-writer',
          { max_output_tokens: 100_000 },
        );
        const res = await world.fx.api.request<{ run_id: string; status: string }>(
          'POST',
          `/api/agent-server/converse?project_id=${agent.projectId}`,
          { agent_id: agent.agentId, message: 'hi' },
        );
        expect(res.body.data).toMatchObject({
          status: 'awaiting_budget',
          pause: { details: { scope: 'key' } },
        });
        await world.fx.api.request('POST', `/api/agent-server/runs/${res.body.data.run_id}/budget`, {
          action: 'cancel',
        });
        expect(world.fx.vendor.received).toHaveLength(0);
        const u = await world.fx.api.request<{ totals: { cost_usd: number } }>(
          'GET',
          `/api/agent-server/virtual-keys/${agent.keyId}/usage`,
        );
        expect(u.body.data.totals.cost_usd).toBeLessThanOrEqual(0.5);
      } finally {
        world.fx.vendor.billing = undefined;
      }
    });

    it('a turn on a budgeted key whose model has no known output ceiling fails naming max_output_tokens', async () => {
      const agent = await meteredAgent(
        {
          providers: [{ provider_id: world.fx.providerId, model_names: ['*'] }],
          budget: { max_usd: 100, period: 'day' },
        },
        undefined,
        'gpt-unbounded',
      );
      const res = await world.fx.api.request<{ status: string; error: { code: string; message: string } }>(
        'POST',
        `/api/agent-server/converse?project_id=${agent.projectId}`,
        { agent_id: agent.agentId, message: 'hi' },
      );
      expect(res.body.data).toMatchObject({ status: 'failed', error: { code: 'unknown_output_limit' } });
      expect(res.body.data.error.message).toContain('max_output_tokens');
      expect(world.fx.vendor.received).toHaveLength(0);
    });

    it("carries the provider's cached tokens into the run and charges them at the cache rate", async () => {
      const agent = await meteredAgent(
        { providers: [{ provider_id: world.fx.providerId, model_names: ['*'] }] },
        { input_per_million_usd: 1_000, output_per_million_usd: 1_000, cache_read_per_million_usd: 100 },
        // Its own model id: the metering caches each provider and model's price for 30 s.
        'gpt-cached',
      );
      world.fx.vendor.script({
        reply: { text: 'cached', usage: { input: 1200, output: 3, cacheRead: 1000 } },
      });
      const res = await world.fx.api.request<{
        status: string;
        usage: Record<string, number>;
        cost_usd: number;
      }>('POST', `/api/agent-server/converse?project_id=${agent.projectId}`, {
        agent_id: agent.agentId,
        message: 'hi',
      });
      // 200 uncached and 3 output tokens at 1000 USD/M, 1000 cache reads at 100 USD/M.
      const cost = (200 * 1_000 + 1_000 * 100 + 3 * 1_000) / 1e6;
      expect(res.body.data).toMatchObject({
        status: 'completed',
        usage: { input_tokens: 1200, output_tokens: 3, cache_read_tokens: 1000 },
      });
      expect(res.body.data.cost_usd).toBeCloseTo(cost, 8);
      const totals = await waitFor(async () => {
        const u = await world.fx.api.request<{ totals: Record<string, number> }>(
          'GET',
          `/api/agent-server/virtual-keys/${agent.keyId}/usage`,
        );
        return u.body.data.totals.requests === 1 ? u.body.data.totals : undefined;
      });
      expect(totals).toMatchObject({ input_tokens: 1200, cache_read_tokens: 1000, cache_write_tokens: 0 });
      expect(totals.cost_usd).toBeCloseTo(cost, 8);
    });

    it("a key that does not grant the agent's model fails the turn, naming the model", async () => {
      const narrow = await meteredAgent({
        providers: [{ provider_id: world.fx.providerId, model_names: ['other-model'] }],
      });
      const res = await world.fx.api.request<{ status: string; error: { code: string; message: string } }>(
        'POST',
        `/api/agent-server/converse?project_id=${narrow.projectId}`,
        { agent_id: narrow.agentId, message: 'hi' },
      );
      expect(res.body.data).toMatchObject({ status: 'failed', error: { code: 'model_not_granted' } });
      expect(res.body.data.error.message).toContain('gpt-test');
      expect(world.fx.vendor.received).toHaveLength(0);
    });

    it('sends text and image parts to the model, and streams when the client asks with Accept', async () => {
      const agent = await world.fx.agent({}, 'Look.');
      const events = await readSse(
        `${world.fx.api.url}/api/agent-server/converse?project_id=${world.fx.projectId}`,
        {
          method: 'POST',
          headers: { accept: 'text/event-stream' },
          body: {
            agent_id: agent.id,
            message: [
              { type: 'text', text: 'What is in this picture?' },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            ],
          },
        },
      );
      expect(events.at(-1)!.event).toBe('run.completed');
      const sent = (
        world.fx.vendor.received[0]!.body as { messages: Array<{ role: string; content: unknown }> }
      ).messages;
      expect(sent[1]).toEqual({
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      });
    });
  },
);
