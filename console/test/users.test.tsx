/** The Users page and a project's Members, as an organisation admin uses them. */
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { AuthContext } from '../src/app/auth.js';
import { MembersButton } from '../src/features/config/projects/members.js';
import { Component as UsersPage } from '../src/features/users/route.js';
import { answer, ok, requests } from './fake-api.js';
import { renderPage } from './render.js';

const ADMIN = {
  mode: 'users' as const,
  config: { mode: 'users' as const, setup_required: false, password_login: true, sso: null },
  session: {
    user: { id: 'u-me', user_name: 'olga', display_name: null, email: null, org_role: 'admin' as const },
    project_roles: [],
    csrf_token: 'c',
  },
};
const user = (id: string, name: string, active = true) => ({
  id,
  user_name: name,
  display_name: null,
  email: null,
  org_role: 'member',
  active,
  has_password: true,
  last_login_at: null,
  created_at: '2026-11-01T00:00:00Z',
  updated_at: '2026-11-01T00:00:00Z',
});

describe('the Users page', () => {
  it('deactivates a user, and offers no Deactivate or Delete for oneself', async () => {
    answer('GET /api/agent-server/users', ok([user('u-me', 'olga'), user('u-2', 'vera')]));
    answer('PATCH /api/agent-server/users/u-2', ok(user('u-2', 'vera', false)));
    renderPage(
      <AuthContext.Provider value={ADMIN}>
        <UsersPage />
      </AuthContext.Provider>,
    );
    fireEvent.click(await screen.findByRole('button', { name: 'Deactivate vera' }));
    await waitFor(() =>
      expect(requests.find((r) => r.method === 'PATCH')).toMatchObject({
        path: '/api/agent-server/users/u-2',
        body: { active: false },
      }),
    );
    expect(screen.queryByRole('button', { name: 'Deactivate olga' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Delete olga' })).toBeNull();
  });
});

describe("a project's members", () => {
  it('lists them with their roles and removes one after asking', async () => {
    answer(
      'GET /api/agent-server/projects/p-1/members',
      ok([{ user_id: 'u-2', user_name: 'vera', display_name: null, role: 'viewer' }]),
    );
    answer('GET /api/agent-server/users', ok([user('u-2', 'vera')]));
    answer('DELETE /api/agent-server/projects/p-1/members/u-2', ok(null));
    renderPage(
      <AuthContext.Provider value={ADMIN}>
        <MembersButton project={{ id: 'p-1', name: 'alpha' } as never} />
      </AuthContext.Provider>,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Members of alpha' }));
    const dialog = await screen.findByRole('dialog', { name: 'Members of alpha' });
    const role = await within(dialog).findByLabelText<HTMLInputElement>('Role of vera');
    expect(role.value).toMatch(/^Viewer/);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Remove vera' }));
    const confirm = await screen.findByRole('dialog', { name: 'Remove vera?' });
    fireEvent.click(within(confirm).getByRole('button', { name: 'Remove' }));
    await waitFor(() =>
      expect(requests.some((r) => r.method === 'DELETE' && r.path.endsWith('/members/u-2'))).toBe(true),
    );
  });
});
