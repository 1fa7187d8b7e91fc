/**
 * The agent form sends numbers as typed: an out-of-range one is not clamped
 * to the nearest bound on blur, and the API's message (which names the bound)
 * shows under its input. While it is filled in, it shows what the API would
 * warn the agent about, in the section of each warning's field.
 */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../src/api/types.js';
import { AgentForm } from '../src/features/config/agents/agent-form.js';
import { describedBy, input } from './dom.js';
import { answer, invalid, ok, requests } from './fake-api.js';
import { renderPage } from './render.js';

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
  llm_summarizer_token_threshold: null,
  llm_summarizer_keep_recent_count: null,
  llm_summarizer_prompt_id: null,
  llm_summarizer_prompt_label: null,
  llm_summarizer_model_id: null,
  sliding_window_keep_count: null,
  mcp_servers: [],
  sandbox: { enabled: false, docker_image: null, require_approval: false },
  max_iterations: 20,
  approval_timeout_ms: null,
  warnings: [],
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
} as unknown as Agent;

const sent = () =>
  requests
    .filter((r) => r.method === 'PATCH' && r.path === '/api/agent-server/agents/agent-1')
    .map((r) => r.body);

async function expectInvalid(label: string, message: string) {
  const el = input(label);
  await waitFor(() => expect(el.getAttribute('aria-invalid')).toBe('true'));
  expect(describedBy(el)).toContain(message);
}

describe('the agent form', () => {
  it('sends out-of-range numbers as typed and shows the bound the API names under each input', async () => {
    answer('GET /api/agent-server/agents/agent-1/skills', ok([]));
    answer(
      'PATCH /api/agent-server/agents/agent-1',
      invalid({
        max_iterations: 'max_iterations must be at most 100',
        approval_timeout_ms: 'approval_timeout_ms must be at least 1000',
      }),
    );
    const user = userEvent.setup();
    renderPage(<AgentForm projectId="proj-1" item={AGENT} onDone={() => {}} />);
    await user.clear(input('Max iterations'));
    await user.type(input('Max iterations'), '500');
    await user.type(input('Approval timeout (ms)'), '-5');
    await user.tab();
    // Blurred: still what was typed, not 100 and 1000.
    expect(input('Max iterations').value).toBe('500');
    expect(input('Approval timeout (ms)').value).toBe('-5');
    await user.click(screen.getByRole('button', { name: 'Save agent' }));

    await expectInvalid('Max iterations', 'max_iterations must be at most 100');
    await expectInvalid('Approval timeout (ms)', 'approval_timeout_ms must be at least 1000');
    expect(sent()).toEqual([expect.objectContaining({ max_iterations: 500, approval_timeout_ms: -5 })]);
  });

  it("shows the API's warnings for the draft in the section of their field, and asks again when a field they depend on changes", async () => {
    answer('GET /api/agent-server/agents/agent-1/skills', ok([]));
    answer('POST /api/agent-server/agents/check', (sent) =>
      ok({
        warnings: (sent.body as { sandbox?: { enabled?: boolean } }).sandbox?.enabled
          ? [
              {
                field: 'sandbox.enabled',
                message: 'sandbox.enabled is true but this server has no sandbox backend',
              },
            ]
          : [{ field: 'model_id', message: 'model_id: not granted' }],
      }),
    );
    const user = userEvent.setup();
    renderPage(<AgentForm projectId="proj-1" item={AGENT} onDone={() => {}} />);
    const agentSection = screen.getByRole('group', { name: 'Agent' });
    expect(await within(agentSection).findByText('model_id: not granted')).toBeTruthy();

    await user.click(screen.getByRole('switch', { name: /Sandbox enabled/ }));
    const sandboxSection = screen.getByRole('group', { name: 'Sandbox' });
    expect(await within(sandboxSection).findByText(/^sandbox\.enabled is true/)).toBeTruthy();
    await waitFor(() => expect(within(agentSection).queryByText('model_id: not granted')).toBeNull());
    const checks = requests.filter((r) => r.path === '/api/agent-server/agents/check');
    expect(checks.map((r) => r.query.get('project_id'))).toEqual(['proj-1', 'proj-1']);
    expect(checks[1]!.body).toMatchObject({
      model_id: 'model-1',
      prompt_id: 'prompt-1',
      sandbox: { enabled: true },
    });
  });
});
