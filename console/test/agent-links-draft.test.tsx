/**
 * The agent form's access and sub-agents fields as the API has them and
 * back: both doors closed, no MCP message and no sub-agents by default, an
 * empty description left out (the sub-agent's own then applies), a stored
 * MCP message and a sub-agent's approval kept by a save that did not touch them.
 */
import { describe, expect, it } from 'vitest';
import type { Agent } from '../src/api/types.js';
import { bodyOf, draftOf } from '../src/features/config/agents/draft.js';

const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';

describe('agent draft: expose and sub_agents', () => {
  it('starts a new agent closed, with no MCP message and no sub-agents', () => {
    const d = draftOf();
    expect(d.expose).toEqual({ mcp: false, a2a: false, mcp_message: '' });
    expect(d.sub_agents).toEqual([]);
    expect(bodyOf(d).expose).toEqual({ mcp: false, a2a: false, mcp_message: null });
    expect(bodyOf(d).sub_agents).toEqual([]);
  });

  it('round-trips an agent, a null description becoming empty text and left out again', () => {
    const agent = {
      name: 'x',
      expose: { mcp: true, a2a: false },
      sub_agents: [
        { agent_id: A, description: 'Looks things up', requires_approval: false },
        { agent_id: B, description: null, requires_approval: true },
      ],
    } as unknown as Agent;
    const d = draftOf(agent);
    expect(d.expose).toEqual({ mcp: true, a2a: false, mcp_message: '' });
    expect(d.sub_agents).toEqual([
      { agent_id: A, description: 'Looks things up', requires_approval: false },
      { agent_id: B, description: '', requires_approval: true },
    ]);
    d.sub_agents[0]!.description = '  Searches  ';
    expect(bodyOf(d).sub_agents).toEqual([
      { agent_id: A, description: 'Searches', requires_approval: false },
      { agent_id: B, requires_approval: true },
    ]);
  });

  it("keeps a stored MCP message and a sub-agent's approval through a save that changed neither, even with the MCP door closed", () => {
    const agent = {
      name: 'x',
      expose: { mcp: false, a2a: true, mcp_message: 'Write the daily report' },
      sub_agents: [{ agent_id: A, description: null, requires_approval: true }],
    } as unknown as Agent;
    const body = bodyOf(draftOf(agent));
    expect(body.expose).toEqual({ mcp: false, a2a: true, mcp_message: 'Write the daily report' });
    expect(body.sub_agents).toEqual([{ agent_id: A, requires_approval: true }]);
  });

  it('sends a blank MCP message as none, and reads an agent from before requires_approval as not requiring it', () => {
    const d = draftOf({ name: 'x', sub_agents: [{ agent_id: A }] } as unknown as Agent);
    expect(d.sub_agents[0]!.requires_approval).toBe(false);
    d.expose.mcp_message = '   ';
    expect(bodyOf(d).expose).toEqual({ mcp: false, a2a: false, mcp_message: null });
  });
});
