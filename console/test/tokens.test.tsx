/** The API tokens page: a new token's body as the API takes it, its secret shown once. */
import { fireEvent, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { AuthContext } from '../src/app/auth.js';
import { Component as TokensPage } from '../src/features/tokens/route.js';
import { input } from './dom.js';
import { answer, ok, requests } from './fake-api.js';
import { renderPage } from './render.js';

const AUTH = {
  mode: 'users' as const,
  config: { mode: 'users' as const, setup_required: false, password_login: true, sso: null },
  session: {
    user: { id: 'u-1', user_name: 'vera', display_name: null, email: null, org_role: 'member' as const },
    project_roles: [],
    csrf_token: 'c',
  },
};

describe('the API tokens page', () => {
  it('creates a personal token with an expiry and shows its secret once', async () => {
    let listed: unknown[] = [];
    answer('GET /api/agent-server/tokens', () => ok(listed));
    answer('POST /api/agent-server/tokens', () => {
      const row = {
        id: 't-1',
        name: 'ci job',
        kind: 'personal',
        token_prefix: 'ags_pat_abcd',
        org_role: null,
      };
      listed = [{ ...row, project_roles: null, expires_at: null, revoked_at: null, last_used_at: null }];
      return ok({ ...row, token: 'ags_pat_abcd-the-whole-secret' });
    });
    renderPage(
      <AuthContext.Provider value={AUTH}>
        <TokensPage />
      </AuthContext.Provider>,
    );
    fireEvent.click(await screen.findByRole('button', { name: 'New token' }));
    const dialog = await screen.findByRole('dialog', { name: 'New API token' });
    // A member issues personal tokens only: no service kind offered.
    expect(within(dialog).queryByText('Service: holds the roles given')).toBeNull();
    fireEvent.change(input('Name', dialog), { target: { value: 'ci job' } });
    fireEvent.change(input('Expires in days', dialog), { target: { value: '30' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create token' }));

    expect((await screen.findByTestId('issued-token')).textContent).toBe('ags_pat_abcd-the-whole-secret');
    expect(requests.find((r) => r.method === 'POST')?.body).toEqual({
      name: 'ci job',
      kind: 'personal',
      expires_in_days: 30,
    });
    fireEvent.click(screen.getByRole('button', { name: 'I have copied it' }));
    expect(await screen.findByText('ags_pat_abcd…')).toBeTruthy();
    expect(screen.queryByText('ags_pat_abcd-the-whole-secret')).toBeNull();
  });
});
