/**
 * An agent with `memory_tools` in a real session (real Temporal, worker and
 * PostgreSQL; the scripted model asks for the calls): it saves a memory in
 * one conversation and finds it in another by meaning, through the
 * project's store embedding model; the memory is the Agent Protocol store's
 * item (read back with the official client). An agent without the setting
 * is not offered the tools.
 */
import { Client } from '@langchain/langgraph-sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { createModel } from '../../helpers/factories/config.js';
import { sentMessages, useSessionWorld } from './session-harness.js';

type ChatBody = {
  tools?: Array<{ function: { name: string } }>;
  messages?: Array<{ role: string; content: unknown }>;
};

const lastMessage = (body: Record<string, unknown>) => (body as ChatBody).messages?.at(-1);

describe('memory tools', () => {
  const world = useSessionWorld();
  let store: Client['store'];

  beforeAll(async () => {
    const { api, projectId, providerId } = world.fx;
    const model = await createModel(api, projectId, { provider_id: providerId, model_id: 'bow-embed' });
    const set = await api.request('PATCH', `/api/agent-server/projects/${projectId}`, {
      store_embedding: { model_id: model.id, fields: ['content'] },
    });
    expect(set.status).toBe(200);
    store = new Client({ apiUrl: `${api.url}/api/langgraph/${projectId}` }).store;
  });

  /** The model: saves what it is told to remember, searches when asked, then answers with what the tool said. */
  function scriptModel(): void {
    world.fx.vendor.respond = (body) => {
      const last = lastMessage(body);
      if (!last) return undefined;
      if (last.role === 'tool') return { reply: { text: `tool said: ${String(last.content)}` } };
      const said = String(last.content);
      if (said.startsWith('remember '))
        return {
          reply: {
            tool_calls: [{ name: 'memory_save', arguments: { key: 'editor', value: said.slice(9) } }],
          },
        };
      if (said.startsWith('recall '))
        return { reply: { tool_calls: [{ name: 'memory_search', arguments: { query: said.slice(7) } }] } };
      return { reply: { text: 'nothing to do' } };
    };
  }

  const chatRequests = () => world.fx.vendor.received.filter((r) => r.path === '/v1/chat/completions');
  const offeredNames = (i: number) =>
    ((chatRequests()[i]?.body as ChatBody).tools ?? []).map((t) => t.function.name);

  it('saves a memory in one conversation and finds it by meaning in another', async () => {
    scriptModel();
    const agent = await world.fx.agent({ memory_tools: true });
    const shown = await world.fx.api.request<{ memory_tools: boolean }>(
      'GET',
      `/api/agent-server/agents/${agent.id}`,
    );
    expect(shown.body.data.memory_tools).toBe(true);

    const saved = await world.fx.converse({
      agent_id: agent.id,
      message: 'remember the user prefers dark mode in the editor',
    });
    expect(saved.body.data.status).toBe('completed');
    expect(saved.body.data.tool_calls).toEqual([
      expect.objectContaining({ name: 'memory_save', is_error: false }),
    ]);
    expect(offeredNames(0).sort()).toEqual(['memory_save', 'memory_search']);

    // The memory is an item of the project's store, in the agent's own namespace.
    const item = await store.getItem(['memories', agent.id], 'editor');
    expect(item?.value).toEqual({ content: 'the user prefers dark mode in the editor' });

    // Something else to find it among.
    await store.putItem(['memories', agent.id], 'pets', { content: 'the user has two cats' });

    const recalled = await world.fx.converse({
      agent_id: agent.id,
      conversation_id: `other-${agent.id}`,
      message: 'recall which editor theme the user likes',
    });
    expect(recalled.body.data.status).toBe('completed');
    expect(recalled.body.data.tool_calls).toEqual([
      expect.objectContaining({ name: 'memory_search', is_error: false }),
    ]);
    // The model got the memories ranked by meaning, the editor one first, scored.
    const toolResult = sentMessages(world.fx.vendor, world.fx.vendor.received.length - 1).at(-1);
    expect(toolResult?.role).toBe('tool');
    const found = JSON.parse(String(toolResult?.content)) as Array<{ key: string; score: number }>;
    expect(found.map((f) => f.key)).toEqual(['editor', 'pets']);
    expect(found[0]!.score).toBeGreaterThan(found[1]!.score);
    expect(recalled.body.data.output?.content).toContain('dark mode');
  });

  it('a bad call is the tool error the model hears; an agent without memory_tools is not offered them', async () => {
    scriptModel();
    const agent = await world.fx.agent({ memory_tools: true });
    world.fx.vendor.respond = (body) => {
      const last = lastMessage(body);
      if (last?.role === 'tool') return { reply: { text: `tool said: ${String(last.content)}` } };
      return {
        reply: { tool_calls: [{ name: 'memory_save', arguments: { value: 'x', namespace: ['a.b'] } }] },
      };
    };
    const bad = await world.fx.converse({ agent_id: agent.id, message: 'save it' });
    expect(bad.body.data.status).toBe('completed');
    expect(bad.body.data.tool_calls).toEqual([
      expect.objectContaining({ name: 'memory_save', is_error: true }),
    ]);
    expect(bad.body.data.output?.content).toContain('periods');

    world.fx.vendor.reset();
    scriptModel();
    const plain = await world.fx.agent();
    const res = await world.fx.converse({ agent_id: plain.id, message: 'hello' });
    expect(res.body.data.status).toBe('completed');
    expect(offeredNames(0)).toEqual([]);
  });
});
