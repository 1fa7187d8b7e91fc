/**
 * Users mode's sign-in (the gate in front of every page): the login page when
 * there is no session, the password form, the identity provider's button, the
 * first owner's setup, the callback's error; open mode untouched.
 */
import { fireEvent, screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { AuthGate } from '../src/app/auth-gate.js';
import { useAuth } from '../src/app/auth.js';
import { input } from './dom.js';
import { answer, failure, ok, requests } from './fake-api.js';
import { renderPage } from './render.js';

const CONFIG = { mode: 'users', setup_required: false, password_login: true, sso: null };
const SESSION = {
  user: { id: 'u-1', user_name: 'vera', display_name: 'Vera', email: null, org_role: 'member' },
  project_roles: [{ project_id: 'p-1', role: 'viewer' }],
  csrf_token: 'csrf-123',
};

function Pages() {
  const auth = useAuth();
  return <output data-testid="pages">{auth.mode === 'users' ? auth.session.user?.user_name : 'open'}</output>;
}

const renderGate = (path = '/playground') =>
  renderPage(
    <AuthGate>
      <Pages />
    </AuthGate>,
    { path },
  );

describe('the login page', () => {
  it('signs in with a password, then shows the pages as that user', async () => {
    answer('GET /api/agent-server/auth/config', ok(CONFIG));
    let signedIn = false;
    answer('GET /api/agent-server/auth/session', () =>
      signedIn ? ok(SESSION) : failure(401, 'Unauthorized'),
    );
    answer('POST /api/agent-server/auth/login', (sent) => {
      const body = sent.body as { user_name: string; password: string };
      if (body.password !== 'right-password') return failure(401, 'Wrong user name or password');
      signedIn = true;
      return ok({ user: SESSION.user, csrf_token: SESSION.csrf_token });
    });
    renderGate();

    fireEvent.change(await screen.findByLabelText(/User name/), { target: { value: 'vera' } });
    fireEvent.change(input('Password'), { target: { value: 'wrong' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('Wrong user name or password')).toBeTruthy();
    expect(screen.queryByTestId('pages')).toBeNull();

    fireEvent.change(input('Password'), { target: { value: 'right-password' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByTestId('pages')).textContent).toBe('vera');
    expect(requests.filter((r) => r.path.endsWith('/auth/login')).map((r) => r.body)).toEqual([
      { user_name: 'vera', password: 'wrong' },
      { user_name: 'vera', password: 'right-password' },
    ]);
  });

  it("offers the identity provider's button, back to the page opened, and shows the callback's error", async () => {
    answer(
      'GET /api/agent-server/auth/config',
      ok({
        ...CONFIG,
        sso: { button_label: 'Sign in with Acme', login_url: '/api/agent-server/auth/oidc/login' },
      }),
    );
    answer('GET /api/agent-server/auth/session', failure(401, 'Unauthorized'));
    renderGate('/traces/abc?service=api&error=access_denied');

    const sso = await screen.findByRole('link', { name: 'Sign in with Acme' });
    expect(sso.getAttribute('href')).toBe(
      `/api/agent-server/auth/oidc/login?return_to=${encodeURIComponent('/console/traces/abc?service=api')}`,
    );
    expect(screen.getByText('access_denied')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Sign in' })).toBeTruthy();
  });

  it('creates the first owner with the setup token, signed in as them', async () => {
    let setUp = false;
    answer('GET /api/agent-server/auth/config', () => ok({ ...CONFIG, setup_required: !setUp }));
    answer('GET /api/agent-server/auth/session', () => (setUp ? ok(SESSION) : failure(401, 'Unauthorized')));
    answer('POST /api/agent-server/auth/setup', () => {
      setUp = true;
      return ok({ user: SESSION.user });
    });
    answer('POST /api/agent-server/auth/login', ok({ user: SESSION.user, csrf_token: 'csrf-123' }));
    renderGate();

    fireEvent.change(await screen.findByLabelText(/Setup token/), { target: { value: ' setup-abc ' } });
    fireEvent.change(input('User name'), { target: { value: 'vera' } });
    fireEvent.change(input('Password'), { target: { value: 'a-long-password' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create owner and sign in' }));
    expect((await screen.findByTestId('pages')).textContent).toBe('vera');
    expect(requests.find((r) => r.path.endsWith('/auth/setup'))?.body).toEqual({
      setup_token: 'setup-abc',
      user_name: 'vera',
      password: 'a-long-password',
    });
    // Setup itself signs the owner in: no second login.
    expect(requests.some((r) => r.path.endsWith('/auth/login'))).toBe(false);
  });

  it('sends the session CSRF token with every change once signed in', async () => {
    answer('GET /api/agent-server/auth/config', ok(CONFIG));
    answer('GET /api/agent-server/auth/session', ok(SESSION));
    renderGate();
    await screen.findByTestId('pages');
    const { api } = await import('../src/api/client.js');
    let csrf: string | null = null;
    await api.DELETE('/api/agent-server/agents/{id}', {
      params: { path: { id: 'a-1' } },
      fetch: (req: Request) => {
        csrf = req.headers.get('x-csrf-token');
        return Promise.resolve(ok(null));
      },
    });
    expect(csrf).toBe('csrf-123');
  });

  it('brings the login page back when a later call answers 401 (the session ended)', async () => {
    answer('GET /api/agent-server/auth/config', ok(CONFIG));
    let live = true;
    answer('GET /api/agent-server/auth/session', () => (live ? ok(SESSION) : failure(401, 'Unauthorized')));
    answer('GET /api/agent-server/projects', failure(401, 'Unauthorized'));
    renderGate();
    await screen.findByTestId('pages');
    live = false;
    const { api } = await import('../src/api/client.js');
    await api.GET('/api/agent-server/projects');
    expect(await screen.findByRole('button', { name: 'Sign in' })).toBeTruthy();
    expect(screen.queryByTestId('pages')).toBeNull();
  });

  it('keeps open mode as it was: no login page, straight to the pages', async () => {
    answer('GET /api/agent-server/auth/config', ok({ ...CONFIG, mode: 'open' }));
    renderGate();
    expect((await screen.findByTestId('pages')).textContent).toBe('open');
    await waitFor(() => expect(requests.some((r) => r.path.endsWith('/auth/session'))).toBe(false));
  });
});
