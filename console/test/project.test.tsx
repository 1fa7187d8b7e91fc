/** The project the pages work in: remembered, and kept when newer projects appear. */
import { act, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ProjectProvider, useProject } from '../src/app/project.js';
import { answer, failure, ok } from './fake-api.js';
import { renderPage } from './render.js';

const ALPHA = { id: 'p-alpha', name: 'alpha' };
const BETA = { id: 'p-beta', name: 'beta' };

function Current() {
  const { project, projects } = useProject();
  return (
    <>
      <output data-testid="project">{project?.name ?? 'none'}</output>
      <output data-testid="listed">{projects.length}</output>
    </>
  );
}

const shown = (id: string) => screen.getByTestId(id).textContent;

afterEach(() => localStorage.clear());

describe('the project picker', () => {
  it('keeps the project it fell back to when a newer one is created', async () => {
    let listed = [ALPHA];
    answer('GET /api/agent-server/projects', () => ok(listed));
    const { client } = renderPage(
      <ProjectProvider>
        <Current />
      </ProjectProvider>,
    );
    expect(await screen.findByText('alpha')).toBeTruthy();

    listed = [BETA, ALPHA]; // newest first
    await act(() => client.invalidateQueries({ queryKey: ['projects'] }));
    await waitFor(() => expect(shown('listed')).toBe('2'));
    expect(shown('project')).toBe('alpha');
  });

  it('falls back to the newest project when the remembered one is gone', async () => {
    localStorage.setItem('agent-server.project', 'p-deleted');
    answer('GET /api/agent-server/projects', ok([BETA, ALPHA]));
    answer('GET /api/agent-server/projects/p-deleted', failure(404, 'Project not found'));
    renderPage(
      <ProjectProvider>
        <Current />
      </ProjectProvider>,
    );
    expect(await screen.findByText('beta')).toBeTruthy();
  });

  it('reads a remembered project beyond the listed ones by its id', async () => {
    localStorage.setItem('agent-server.project', 'p-old');
    answer('GET /api/agent-server/projects', ok([BETA, ALPHA]));
    answer('GET /api/agent-server/projects/p-old', ok({ id: 'p-old', name: 'old' }));
    renderPage(
      <ProjectProvider>
        <Current />
      </ProjectProvider>,
    );
    expect(await screen.findByText('old')).toBeTruthy();
  });
});
