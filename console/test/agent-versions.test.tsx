/**
 * The agent form's Versions panel: each version with what it changed from
 * the one before, Pin asking first and the form starting again from the
 * pinned agent; and the context, whose text the API refuses shows the API's
 * message under its input.
 */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../src/api/types.js';
import { AgentForm } from '../src/features/config/agents/agent-form.js';
import { describedBy, input } from './dom.js';
import { answer, invalid, ok, requests } from './fake-api.js';
import { renderPage } from './render.js';

const V1 = {
  id: 'agent-1',
  project_id: 'proj-1',
  name: 'helper',
  model_id: 'model-1',
  prompt_id: 'prompt-1',
  prompt_label: 'latest',
  summarizer_type: 'none',
  mcp_servers: [],
  sandbox: { enabled: false, docker_image: null, require_approval: false },
  max_iterations: 5,
  memory_tools: false,
  context: {},
  version: 1,
  warnings: [],
};
const V2 = { ...V1, max_iterations: 9, version: 2 };

const versionRow = (version: number, in_force: boolean, settings: object, created_at: string) => ({
  agent_id: 'agent-1',
  version,
  in_force,
  settings,
  created_at,
});

describe("the agent form's versions", () => {
  it('lists what each version changed, asks before pinning, then shows the pinned settings', async () => {
    answer('GET /api/agent-server/agents/agent-1/skills', ok([]));
    answer(
      'GET /api/agent-server/agents/agent-1/versions',
      ok([versionRow(2, true, V2, '2026-01-02T00:00:00Z'), versionRow(1, false, V1, '2026-01-01T00:00:00Z')]),
    );
    answer('POST /api/agent-server/agents/agent-1/versions/1/pin', ok(V1));
    const user = userEvent.setup();
    renderPage(<AgentForm projectId="proj-1" item={V2 as unknown as Agent} onDone={() => {}} />);

    expect(await screen.findByText('version 2 in force')).toBeTruthy();
    const table = await screen.findByRole('table', { name: 'Versions' });
    expect(within(table).getByText('max_iterations: 5 → 9')).toBeTruthy();
    expect(within(table).getByText('first version')).toBeTruthy();

    await user.click(within(table).getByRole('button', { name: 'Pin version 1' }));
    expect(within(table).getByText('Put version 1 back in force?')).toBeTruthy();
    expect(requests.some((r) => r.path.endsWith('/pin'))).toBe(false);
    await user.click(within(table).getByRole('button', { name: 'Pin version 1' }));

    expect(await screen.findByText('version 1 in force')).toBeTruthy();
    expect(input('Max iterations').value).toBe('5');
    const pin = requests.find((r) => r.path.endsWith('/pin'));
    expect(pin?.query.get('project_id')).toBe('proj-1');
  });

  it("sends memory tools; context that is not JSON is refused in place, JSON that is not an object gets the API's message under Context", async () => {
    answer('GET /api/agent-server/agents/agent-1/skills', ok([]));
    answer('GET /api/agent-server/agents/agent-1/versions', ok([]));
    answer(
      'PATCH /api/agent-server/agents/agent-1',
      invalid({ context: '"context" must be of type object' }),
    );
    const user = userEvent.setup();
    renderPage(<AgentForm projectId="proj-1" item={V1 as unknown as Agent} onDone={() => {}} />);
    await user.click(screen.getByRole('checkbox', { name: 'Memory tools' }));
    // Not JSON at all: the input says so and nothing is sent.
    await user.type(input('Context'), 'not json');
    await user.click(screen.getByRole('button', { name: 'Save agent' }));
    await waitFor(() => expect(describedBy(input('Context'))).toContain('Not valid JSON'));
    expect(requests.some((r) => r.method === 'PATCH')).toBe(false);
    // JSON, but not an object: sent as typed, the API's message under the input.
    await user.clear(input('Context'));
    await user.type(input('Context'), '[[1]');
    await user.click(screen.getByRole('button', { name: 'Save agent' }));

    const context = input('Context');
    await waitFor(() => expect(context.getAttribute('aria-invalid')).toBe('true'));
    expect(describedBy(context)).toContain('"context" must be of type object');
    const patch = requests.find((r) => r.method === 'PATCH');
    expect(patch?.body).toMatchObject({ memory_tools: true, context: [1] });
  });
});
