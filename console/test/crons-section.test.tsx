/**
 * The agent form's schedules: each of the agent's crons with its expression,
 * time zone, conversation, next run and state; Pause and Resume send the
 * cron's pause or resume and show the state the API answers; the link to
 * the schedule in the Temporal UI when the API gives one; what to do when
 * the agent has none.
 */
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { CronsSection } from '../src/features/config/agents/crons-section.js';
import { answer, ok, requests } from './fake-api.js';
import { renderPage } from './render.js';

const CRON = {
  id: 'cron-1',
  project_id: 'p-1',
  agent_id: 'a-1',
  conversation_id: 'thread-7',
  schedule: '0 9 * * 1-5',
  timezone: 'Europe/Paris',
  end_time: null,
  overlap_policy: 'skip',
  on_run_completed: null,
  paused: false,
  next_run_date: '2026-12-01T08:00:00.000Z',
  payload: {},
  metadata: {},
  schedule_id: 'cron/cron-1',
  temporal_ui_url: 'http://temporal.example/namespaces/default/schedules/cron%2Fcron-1',
  created_at: '2026-11-27T00:00:00.000Z',
  updated_at: '2026-11-27T00:00:00.000Z',
};

describe('the agent form’s schedules', () => {
  it('lists the agent’s crons; Pause sends the pause and shows the cron paused', async () => {
    let paused = false;
    answer('GET /api/agent-server/crons', (sent) =>
      sent.query.get('agent_id') === 'a-1' && sent.query.get('project_id') === 'p-1'
        ? ok([{ ...CRON, paused, next_run_date: paused ? null : CRON.next_run_date }])
        : undefined,
    );
    answer('POST /api/agent-server/crons/cron-1/pause', () => {
      paused = true;
      return ok({ ...CRON, paused: true, next_run_date: null });
    });
    const user = userEvent.setup();
    renderPage(<CronsSection projectId="p-1" agentId="a-1" />);

    const row = (await screen.findByText('0 9 * * 1-5')).closest('tr')!;
    expect(row.textContent).toContain('Europe/Paris');
    expect(row.textContent).toContain('thread-7');
    expect(row.textContent).toContain('active');
    expect(screen.getByRole('link', { name: 'Schedule in Temporal' }).getAttribute('href')).toBe(
      CRON.temporal_ui_url,
    );

    await user.click(screen.getByRole('button', { name: 'Pause cron 0 9 * * 1-5' }));
    await waitFor(() => expect(row.textContent).toContain('paused'));
    expect(
      requests.some((r) => r.method === 'POST' && r.path === '/api/agent-server/crons/cron-1/pause'),
    ).toBe(true);
    expect(screen.getByRole('button', { name: 'Resume cron 0 9 * * 1-5' })).toBeTruthy();
  });

  it('says how to make one when the agent has none, and waits for the agent to exist', async () => {
    answer('GET /api/agent-server/crons', ok([]));
    renderPage(<CronsSection projectId="p-1" agentId="a-1" />);
    expect(await screen.findByText(/No schedule yet/)).toBeTruthy();
    renderPage(<CronsSection projectId="p-1" agentId={undefined} />);
    expect(screen.getByText('Schedules can be added once the agent exists.')).toBeTruthy();
  });
});
