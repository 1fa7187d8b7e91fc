/** The conversation list: filtered by namespace once the typing settles, the filter kept in the address. */
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useLocation } from 'react-router';
import { describe, expect, it } from 'vitest';
import { ProjectProvider } from '../src/app/project.js';
import { SessionList } from '../src/features/sessions/session-list.js';
import { input } from './dom.js';
import { answer, ok, requests } from './fake-api.js';
import { renderPage } from './render.js';

function Address() {
  return <output data-testid="address">{useLocation().search}</output>;
}

const CONVERSATION = {
  id: 'conv-support-1',
  namespace: 'support',
  created_at: '2026-03-01T10:00:00.000Z',
  updated_at: '2026-03-01T10:05:00.000Z',
};

const conversationQueries = () =>
  requests.filter((r) => r.path === '/api/agent-server/conversations').map((r) => r.query);

describe('the conversation list', () => {
  it('filters by the namespace typed once it settles, and keeps it in the address', async () => {
    answer('GET /api/agent-server/projects', ok([{ id: 'p-1', name: 'alpha' }]));
    answer('GET /api/agent-server/agents', ok([]));
    answer('GET /api/agent-server/conversations', ({ query }) =>
      ok(query.get('namespace') === 'nope' ? [] : [CONVERSATION]),
    );
    const user = userEvent.setup();
    renderPage(
      <ProjectProvider>
        <SessionList />
        <Address />
      </ProjectProvider>,
      { path: '/sessions?offset=50' },
    );
    expect(await screen.findByRole('link', { name: 'conv-support-1' })).toBeTruthy();

    await user.type(input('Namespace'), 'nope');
    expect(await screen.findByText('No conversation matches these filters')).toBeTruthy();
    await waitFor(() => expect(screen.getByTestId('address').textContent).toBe('?namespace=nope'));
    // One query for the settled value, none for what was typed on the way.
    const namespaces = conversationQueries().map((q) => q.get('namespace'));
    expect(namespaces.filter((n) => n && n !== 'nope')).toEqual([]);

    await user.clear(input('Namespace'));
    await waitFor(() => expect(screen.getByTestId('address').textContent).toBe(''));
    expect(await screen.findByRole('link', { name: 'conv-support-1' })).toBeTruthy();
  });
});
