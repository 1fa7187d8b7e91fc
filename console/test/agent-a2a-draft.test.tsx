/**
 * The agent form's remote A2A agents as the API has them and back: none by
 * default, an agent's list saved back unchanged, an entry whose remote agent
 * is not chosen yet left out.
 */
import { describe, expect, it } from 'vitest';
import type { Agent } from '../src/api/types.js';
import { bodyOf, draftOf } from '../src/features/config/agents/draft.js';

const R1 = '00000000-0000-4000-8000-0000000000a1';
const R2 = '00000000-0000-4000-8000-0000000000a2';

describe('agent draft: a2a_agents', () => {
  it('starts a new agent with no remote agent', () => {
    const d = draftOf();
    expect(d.a2a_agents).toEqual([]);
    expect(bodyOf(d).a2a_agents).toEqual([]);
  });

  it('saves an agent back with its remote agents unchanged, missing filters as empty lists', () => {
    const a2a_agents = [
      { a2a_agent_id: R1, tool_filters: ['refund'], tools_requiring_approval: ['refund'] },
      { a2a_agent_id: R2, tool_filters: [], tools_requiring_approval: [] },
    ];
    const agent = { name: 'x', a2a_agents } as unknown as Agent;
    expect(bodyOf(draftOf(agent)).a2a_agents).toEqual(a2a_agents);
    const bare = { name: 'x', a2a_agents: [{ a2a_agent_id: R1 }] } as unknown as Agent;
    expect(bodyOf(draftOf(bare)).a2a_agents).toEqual([
      { a2a_agent_id: R1, tool_filters: [], tools_requiring_approval: [] },
    ]);
  });

  it('sends edits, leaving out an entry with no remote agent chosen', () => {
    const d = draftOf({ name: 'x', a2a_agents: [{ a2a_agent_id: R1 }] } as unknown as Agent);
    d.a2a_agents[0]!.tools_requiring_approval = ['ask'];
    d.a2a_agents.push({ a2a_agent_id: null, tool_filters: ['answer'], tools_requiring_approval: [] });
    expect(bodyOf(d).a2a_agents).toEqual([
      { a2a_agent_id: R1, tool_filters: [], tools_requiring_approval: ['ask'] },
    ]);
  });
});
