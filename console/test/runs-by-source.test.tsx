/**
 * The usage page's runs by source: one statistics query for the chosen
 * project over the window, a row per source, and the API's error shown.
 */
import { screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ProjectProvider } from '../src/app/project.js';
import { RunsBySource } from '../src/features/usage/run-stats.js';
import { answer, failure, ok, requests } from './fake-api.js';
import { renderPage } from './render.js';

const START = '2026-11-27T00:00:00.000Z';

afterEach(() => localStorage.clear());

function show() {
  answer('GET /api/agent-server/projects', ok([{ id: 'p-1', name: 'alpha' }]));
  renderPage(
    <ProjectProvider>
      <RunsBySource start={START} />
    </ProjectProvider>,
  );
}

describe('runs by source', () => {
  it('asks once for the project and window, and shows a row per source', async () => {
    answer(
      'GET /api/agent-server/runs/statistics',
      ok([
        {
          source: 'mcp',
          runs: 3,
          completed: 2,
          failed: 1,
          cancelled: 0,
          cost_usd: 0.5,
          p50_duration_ms: 1200,
        },
        {
          source: 'sub_agent',
          runs: 1,
          completed: 1,
          failed: 0,
          cancelled: 0,
          cost_usd: 0,
          p50_duration_ms: null,
        },
      ]),
    );
    show();
    const table = await screen.findByRole('table', { name: 'Runs by source' });
    expect(within(table).getByText('mcp')).toBeTruthy();
    expect(within(table).getByText('sub-agent')).toBeTruthy();
    const sent = requests.filter((r) => r.path === '/api/agent-server/runs/statistics');
    expect(sent).toHaveLength(1);
    expect(Object.fromEntries(sent[0]!.query)).toEqual({
      project_id: 'p-1',
      group_by: 'source',
      start_time: START,
    });
  });

  it("shows the API's error", async () => {
    answer('GET /api/agent-server/runs/statistics', failure(500, 'Statistics unavailable'));
    show();
    expect(await screen.findByText(/Statistics unavailable/)).toBeTruthy();
  });
});
