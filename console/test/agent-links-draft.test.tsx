/**
 * The agent form's access and sub-agents fields as the API has them and
 * back: both doors closed and no sub-agents by default, an empty
 * description left out (the sub-agent's own then applies).
 */
import { describe, expect, it } from 'vitest';
import type { Agent } from '../src/api/types.js';
import { bodyOf, draftOf } from '../src/features/config/agents/draft.js';

const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';

describe('agent draft: expose and sub_agents', () => {
  it('starts a new agent closed, with no sub-agents', () => {
    const d = draftOf();
    expect(d.expose).toEqual({ mcp: false, a2a: false });
    expect(d.sub_agents).toEqual([]);
    expect(bodyOf(d).expose).toEqual({ mcp: false, a2a: false });
    expect(bodyOf(d).sub_agents).toEqual([]);
  });

  it('round-trips an agent, a null description becoming empty text and left out again', () => {
    const agent = {
      name: 'x',
      expose: { mcp: true, a2a: false },
      sub_agents: [
        { agent_id: A, description: 'Looks things up' },
        { agent_id: B, description: null },
      ],
    } as unknown as Agent;
    const d = draftOf(agent);
    expect(d.expose).toEqual({ mcp: true, a2a: false });
    expect(d.sub_agents).toEqual([
      { agent_id: A, description: 'Looks things up' },
      { agent_id: B, description: '' },
    ]);
    d.sub_agents[0]!.description = '  Searches  ';
    expect(bodyOf(d).sub_agents).toEqual([{ agent_id: A, description: 'Searches' }, { agent_id: B }]);
  });
});
