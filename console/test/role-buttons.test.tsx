/** A configuration tab shows New, Edit and Delete only to whom the API would let use them. */
import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Session } from '../src/api/types.js';
import { AuthContext, type AuthState } from '../src/app/auth.js';
import { ResourcePage } from '../src/features/config/shared/resource-page.js';
import { renderPage } from './render.js';

const CONFIG = { mode: 'users' as const, setup_required: false, password_login: true, sso: null };
const ROWS = [{ id: 'a-1', name: 'helper' }];

function session(orgRole: 'owner' | 'admin' | 'member'): Session {
  return {
    user: { id: 'u-1', user_name: 'u', display_name: null, email: null, org_role: orgRole },
    project_roles: [],
    csrf_token: 'c',
  };
}

function renderTab(auth: AuthState) {
  return renderPage(
    <AuthContext.Provider value={auth}>
      <ResourcePage<{ id: string; name: string }>
        need="develop"
        title="Things"
        what="thing"
        intro="Things."
        query={{ isLoading: false, error: null, data: ROWS }}
        empty={{ title: 'None', body: 'None.' }}
        columns={[]}
        remove={{ mutateAsync: () => Promise.resolve() }}
        form={() => null}
      />
    </AuthContext.Provider>,
  );
}

describe("a configuration tab's buttons", () => {
  it('hides New, Edit and Delete from a member without the role in the project', () => {
    renderTab({ mode: 'users', config: CONFIG, session: session('member') });
    expect(screen.getByText('helper')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'New thing' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Edit helper' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Delete helper' })).toBeNull();
  });

  it('shows them to an organisation admin, and to everyone in open mode', () => {
    renderTab({ mode: 'users', config: CONFIG, session: session('admin') });
    expect(screen.getByRole('button', { name: 'New thing' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Delete helper' })).toBeTruthy();
    renderTab({ mode: 'open' });
    expect(screen.getAllByRole('button', { name: 'Edit helper' })).toHaveLength(2);
  });
});
