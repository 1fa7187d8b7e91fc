/**
 * The agent form's A2A agents section: an agent's remote agent shows picked
 * with its skill filters, its card is read when its skills are asked for, a save sends
 * the list back, and the API's message for an entry shows under its picker.
 */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../src/api/types.js';
import { AgentForm } from '../src/features/config/agents/agent-form.js';
import { describedBy, input } from './dom.js';
import { answer, invalid, ok, requests } from './fake-api.js';
import { renderPage } from './render.js';

const REMOTE = '00000000-0000-4000-8000-0000000000a1';

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
  a2a_agents: [{ a2a_agent_id: REMOTE, tool_filters: ['answer'], tools_requiring_approval: [] }],
  warnings: [],
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
} as unknown as Agent;

const patched = () =>
  requests.filter((r) => r.method === 'PATCH' && r.path === '/api/agent-server/agents/agent-1');

describe('the agent form: A2A agents', () => {
  it("shows the agent's remote agent, reads its card on demand, saves the list and places the API's message under the picker", async () => {
    answer('GET /api/agent-server/agents/agent-1/skills', ok([]));
    answer(
      'GET /api/agent-server/a2a-agents',
      ok([{ id: REMOTE, name: 'billing', card_url: 'https://b.example/card', headers: {} }]),
    );
    answer(
      `POST /api/agent-server/a2a-agents/${REMOTE}/inspect`,
      ok({ name: 'Billing', skills: [{ id: 'refund', tool: 'billing__refund' }] }),
    );
    answer(
      'PATCH /api/agent-server/agents/agent-1',
      invalid({ 'a2a_agents.0.a2a_agent_id': 'a2a_agents.0.a2a_agent_id: no such A2A agent in the project' }),
    );
    const user = userEvent.setup();
    renderPage(<AgentForm projectId="proj-1" item={AGENT} onDone={() => {}} />);
    const section = screen.getByRole('group', { name: 'A2A agents' });
    await waitFor(() => expect(input('A2A agent 1', section).value).toBe('billing'));
    expect(within(section).getByText('answer')).toBeTruthy();

    await user.click(within(section).getByRole('button', { name: 'Load its skills' }));
    await waitFor(() => expect(requests.some((r) => r.path.endsWith(`/${REMOTE}/inspect`))).toBe(true));
    await user.type(input('Skills requiring approval', section), 'refund{Enter}');
    await user.click(screen.getByRole('button', { name: 'Save agent' }));

    await waitFor(() => expect(describedBy(input('A2A agent 1', section))).toContain('no such A2A agent'));
    expect(patched().map((r) => (r.body as { a2a_agents: unknown }).a2a_agents)).toEqual([
      [{ a2a_agent_id: REMOTE, tool_filters: ['answer'], tools_requiring_approval: ['refund'] }],
    ]);
  }, 20_000); // the whole agent form renders in jsdom: slow on a busy machine
});
