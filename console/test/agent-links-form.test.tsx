/**
 * The agent form's Access and Sub-agents sections: an agent's MCP message
 * and a sub-agent's approval show as stored and go back unchanged on a save,
 * changes to them are sent, and the API's message for the MCP message shows
 * under its input.
 */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../src/api/types.js';
import { AgentForm } from '../src/features/config/agents/agent-form.js';
import { describedBy, input } from './dom.js';
import { answer, invalid, ok, requests } from './fake-api.js';
import { renderPage } from './render.js';

const CHILD = '00000000-0000-4000-8000-0000000000c1';
const MESSAGE = 'Message when called without one';

const AGENT = {
  id: 'agent-1',
  project_id: 'proj-1',
  name: 'helper',
  description: null,
  model_id: 'model-1',
  prompt_id: 'prompt-1',
  prompt_label: 'latest',
  schema_id: null,
  enable_history: true,
  summarizer_type: 'none',
  mcp_servers: [],
  sandbox: { enabled: false, docker_image: null, require_approval: false },
  max_iterations: 20,
  approval_timeout_ms: null,
  expose: { mcp: true, a2a: false, mcp_message: 'Write the daily report' },
  sub_agents: [{ agent_id: CHILD, description: null, requires_approval: true }],
  warnings: [],
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
} as unknown as Agent;

const patched = () =>
  requests
    .filter((r) => r.method === 'PATCH' && r.path === '/api/agent-server/agents/agent-1')
    .map((r) => r.body as Pick<Agent, 'expose' | 'sub_agents'>);

function scriptAgents() {
  answer('GET /api/agent-server/agents/agent-1/skills', ok([]));
  answer(
    'GET /api/agent-server/agents',
    ok([AGENT, { ...AGENT, id: CHILD, name: 'researcher', sub_agents: [] }]),
  );
}

const approval = () =>
  screen.getByRole<HTMLInputElement>('checkbox', { name: 'researcher requires approval' });

describe('the agent form: access and sub-agents', () => {
  it("keeps the stored MCP message and the sub-agent's approval through a save that changed neither", async () => {
    scriptAgents();
    answer('PATCH /api/agent-server/agents/agent-1', ok(AGENT));
    const user = userEvent.setup();
    renderPage(<AgentForm projectId="proj-1" item={AGENT} onDone={() => {}} />);
    const access = screen.getByRole('group', { name: 'Access' });
    expect(input(MESSAGE, access).value).toBe('Write the daily report');
    await waitFor(() => expect(approval().checked).toBe(true));

    await user.click(screen.getByRole('button', { name: 'Save agent' }));
    await waitFor(() => expect(patched()).toHaveLength(1));
    expect(patched()[0]).toMatchObject({
      expose: { mcp: true, a2a: false, mcp_message: 'Write the daily report' },
      sub_agents: [{ agent_id: CHILD, requires_approval: true }],
    });
  });

  it('sends a cleared MCP message as none and an unchecked approval as false', async () => {
    scriptAgents();
    answer('PATCH /api/agent-server/agents/agent-1', ok(AGENT));
    const user = userEvent.setup();
    renderPage(<AgentForm projectId="proj-1" item={AGENT} onDone={() => {}} />);
    const access = screen.getByRole('group', { name: 'Access' });
    await waitFor(() => expect(approval().checked).toBe(true));
    await user.clear(input(MESSAGE, access));
    await user.click(approval());
    await user.click(screen.getByRole('button', { name: 'Save agent' }));
    await waitFor(() => expect(patched()).toHaveLength(1));
    expect(patched()[0]).toMatchObject({
      expose: { mcp: true, a2a: false, mcp_message: null },
      sub_agents: [{ agent_id: CHILD, requires_approval: false }],
    });
  });

  it('asks for the message only with the MCP box checked, and shows the API refusing it under its input', async () => {
    scriptAgents();
    answer(
      'PATCH /api/agent-server/agents/agent-1',
      invalid({ 'expose.mcp_message': '"expose.mcp_message" length must be less than or equal to 10000' }),
    );
    const user = userEvent.setup();
    renderPage(<AgentForm projectId="proj-1" item={AGENT} onDone={() => {}} />);
    const access = screen.getByRole('group', { name: 'Access' });
    await user.click(within(access).getByRole('checkbox', { name: /^MCP/ }));
    expect(within(access).queryByLabelText(MESSAGE)).toBeNull();
    await user.click(within(access).getByRole('checkbox', { name: /^MCP/ }));

    await user.click(screen.getByRole('button', { name: 'Save agent' }));
    const el = input(MESSAGE, access);
    await waitFor(() => expect(el.getAttribute('aria-invalid')).toBe('true'));
    expect(describedBy(el)).toContain('length must be less than or equal to 10000');
  });
});
