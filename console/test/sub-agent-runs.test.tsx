/** A run's sub-agents in its details: the runs its calls started, linked to their conversations, and a sub-agent's caller. */
import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Run } from '../src/api/types.js';
import { SubAgentRuns } from '../src/features/sessions/sub-agent-runs.js';
import { answer, ok, requests } from './fake-api.js';
import { renderPage } from './render.js';

const CALLER = {
  run_id: 'run-caller',
  project_id: 'p-1',
  conversation_id: 'conv-caller',
  agent_name: 'lead',
  status: 'completed',
  parent_run_id: null,
  tools: { offered: [{ name: 'agent__researcher', kind: 'sub_agent', agent_id: 'a-2' }] },
} as unknown as Run;

const CHILD = {
  run_id: 'run-child',
  project_id: 'p-1',
  conversation_id: 'conv-child',
  agent_name: 'researcher',
  status: 'completed',
  parent_run_id: 'run-caller',
  tools: { offered: [] },
} as unknown as Run;

describe('sub-agent runs in a run’s details', () => {
  it('lists the runs a caller’s calls started, each linked to its own conversation', async () => {
    answer(
      'GET /api/agent-server/runs/run-caller',
      ok({
        ...CALLER,
        sub_agent_runs: [
          {
            run_id: 'run-child',
            agent_id: 'a-2',
            agent_name: 'researcher',
            conversation_id: 'conv-child',
            status: 'completed',
            created_at: '2026-03-01T10:00:00.000Z',
            finished_at: '2026-03-01T10:00:02.000Z',
          },
        ],
      }),
    );
    renderPage(<SubAgentRuns run={CALLER} />);
    const link = await screen.findByRole('link', { name: 'conv-child' });
    expect(link.getAttribute('href')).toBe('/sessions/conv-child');
    expect(screen.getByRole('table', { name: 'Sub-agent runs' }).textContent).toContain('researcher');
  });

  it('links a sub-agent’s run back to the run that called it', async () => {
    answer('GET /api/agent-server/runs/run-caller', ok(CALLER));
    renderPage(<SubAgentRuns run={CHILD} />);
    const link = await screen.findByRole('link', { name: 'lead’s run' });
    expect(link.getAttribute('href')).toBe('/sessions/conv-caller');
  });

  it('shows nothing for a run without sub-agents, and asks the API nothing', () => {
    const before = requests.length;
    renderPage(<SubAgentRuns run={{ ...CHILD, parent_run_id: null }} />);
    expect(screen.queryByText(/sub-agent/i)).toBeNull();
    expect(requests.length).toBe(before);
  });
});
