/**
 * Users mode from an empty database: the setup token logged at start makes
 * the first owner (and signs them in), then passwords sign people in and out
 * through the session cookie, whose changes need the CSRF header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, loggedSetupToken, rowCount, startUsersModeApi, type UsersModeApi } from './users-mode.js';

const PASSWORD = 'correct horse battery staple';

describe('users mode: setup, login, logout', () => {
  let env: UsersModeApi;

  beforeAll(async () => {
    env = await startUsersModeApi('auth_login', { AUTH_SESSION_TTL_SECONDS: '3600' });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('starts with no users, says setup is required, and logs a setup token once', async () => {
    const res = await env.api.request('GET', '/api/agent-server/auth/config');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ mode: 'users', setup_required: true, password_login: true, sso: null });
    expect(env.api.logs.lines.filter((l) => l.includes('no users yet')).length).toBe(1);
    expect(await rowCount(env.db, 'setup_tokens')).toBe(1);
    // Nothing else answers without a credential.
    expect((await env.api.request('GET', '/api/agent-server/projects')).status).toBe(401);
  });

  it('refuses a wrong setup token, naming the field', async () => {
    const res = await env.api.request('POST', '/api/agent-server/auth/setup', {
      setup_token: 'ags_setup_wrong',
      user_name: 'alice',
      password: PASSWORD,
    });
    expect(res.status).toBe(400);
    expect(res.body.errorDetails.fields?.[0]?.field).toBe('setup_token');
    expect(await rowCount(env.db, 'users')).toBe(0);
  });

  it('creates the first owner with the logged setup token and signs them in; the token is gone', async () => {
    const browser = new Browser(env.api);
    const res = await browser.request<{ user: { user_name: string; org_role: string } }>(
      'POST',
      '/api/agent-server/auth/setup',
      {
        setup_token: loggedSetupToken(env.api),
        user_name: 'alice',
        password: PASSWORD,
        display_name: 'Alice',
      },
    );
    expect(res.status).toBe(200);
    expect(res.body.data.user).toMatchObject({ user_name: 'alice', org_role: 'owner' });
    expect(browser.cookie).toMatch(/^ags_session=ags_ses_/);
    const session = await browser.request<{ user: { user_name: string }; csrf_token: string }>(
      'GET',
      '/api/agent-server/auth/session',
    );
    expect(session.status).toBe(200);
    expect(session.body.data.user.user_name).toBe('alice');
    expect(session.body.data.csrf_token).toBe(browser.csrf);
    expect(await rowCount(env.db, 'setup_tokens')).toBe(0);

    const again = await env.api.request('POST', '/api/agent-server/auth/setup', {
      setup_token: loggedSetupToken(env.api),
      user_name: 'mallory',
      password: PASSWORD,
    });
    expect(again.status).toBe(409);
    const config = await env.api.request<{ setup_required: boolean }>('GET', '/api/agent-server/auth/config');
    expect(config.body.data.setup_required).toBe(false);
  });

  it('signs in with the password: an HTTP-only, SameSite cookie for the session TTL, and the CSRF token', async () => {
    const browser = new Browser(env.api);
    const res = await browser.request<{ user: { user_name: string }; csrf_token: string }>(
      'POST',
      '/api/agent-server/auth/login',
      { user_name: 'ALICE', password: PASSWORD },
    );
    expect(res.status).toBe(200);
    expect(res.body.data.user.user_name).toBe('alice');
    expect(res.body.data.csrf_token).toEqual(expect.any(String));
    const cookie = browser.lastSetCookie.join('\n');
    expect(cookie).toMatch(/^ags_session=ags_ses_[^;]+; Path=\/; Max-Age=3600; HttpOnly; SameSite=Lax$/);
    const audit = await env
      .db('audit_events')
      .where({ action: 'auth.login' })
      .orderBy('at', 'desc')
      .first<Record<string, unknown> | undefined>('*');
    expect(audit).toMatchObject({ actor_type: 'user', actor_name: 'alice', status: 200 });
    const user = await env
      .db('users')
      .where({ user_name: 'alice' })
      .first<{ last_login_at: Date | null }>('last_login_at');
    expect(user.last_login_at).toBeInstanceOf(Date);
  });

  it('answers a wrong password and an unknown user with the same 401, and audits both', async () => {
    const wrong = await env.api.request(
      'POST',
      '/api/agent-server/auth/login',
      { user_name: 'alice', password: 'not the password' },
      { 'user-agent': 'login-test/1' },
    );
    const unknown = await env.api.request('POST', '/api/agent-server/auth/login', {
      user_name: 'nobody',
      password: 'not the password',
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(wrong.body);
    expect(wrong.headers.getSetCookie()).toEqual([]);
    const failed = await env
      .db('audit_events')
      .where({ action: 'auth.login_failed' })
      .orderBy('at')
      .select<Array<Record<string, unknown>>>('*');
    expect(failed).toHaveLength(2);
    expect(failed[0]).toMatchObject({
      actor_type: 'anonymous',
      actor_name: 'alice',
      user_agent: 'login-test/1',
      status: 401,
    });
    expect(failed[0]!.ip).toEqual(expect.any(String));
    expect(JSON.stringify(failed)).not.toContain('not the password');
  });

  it('refuses a change made with the cookie without the CSRF header, and signs out with it', async () => {
    const browser = new Browser(env.api);
    await browser.request('POST', '/api/agent-server/auth/login', { user_name: 'alice', password: PASSWORD });
    const noCsrf = await browser.request(
      'POST',
      '/api/agent-server/projects',
      { name: 'p' },
      { csrf: false },
    );
    expect(noCsrf.status).toBe(403);
    const withCsrf = await browser.request('POST', '/api/agent-server/projects', { name: 'p' });
    expect(withCsrf.status).toBe(200);

    const cookie = browser.cookie;
    expect(
      (await browser.request('POST', '/api/agent-server/auth/logout', undefined, { csrf: false })).status,
    ).toBe(403);
    const out = await browser.request('POST', '/api/agent-server/auth/logout');
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie()[0]).toMatch(/^ags_session=; Path=\/; Max-Age=0/);
    expect(browser.cookie).toBeUndefined();
    // The old cookie, replayed, is dead on the server too.
    const replay = await env.api.request('GET', '/api/agent-server/auth/session', undefined, {
      cookie: cookie!,
    });
    expect(replay.status).toBe(401);
    expect(await env.db('audit_events').where({ action: 'auth.logout' }).first()).toMatchObject({
      actor_name: 'alice',
    });
  });
});

describe('users mode: a fixed setup token, behind https', () => {
  let env: UsersModeApi;
  const SETUP = 'a-setup-token-chosen-by-the-operator';

  beforeAll(async () => {
    env = await startUsersModeApi('auth_fixed', {
      AUTH_SETUP_TOKEN: SETUP,
      PUBLIC_URL: 'https://agents.example.test',
      ALLOWED_HOSTS: '127.0.0.1',
    });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('takes AUTH_SETUP_TOKEN (never printing it) and sets a Secure cookie', async () => {
    expect(env.api.logs.text).toContain('AUTH_SETUP_TOKEN');
    expect(env.api.logs.text).not.toContain(SETUP);
    expect(env.api.logs.text).not.toMatch(/ags_setup_/);
    const browser = new Browser(env.api);
    const res = await browser.request('POST', '/api/agent-server/auth/setup', {
      setup_token: SETUP,
      user_name: 'root',
      password: PASSWORD,
    });
    expect(res.status).toBe(200);
    expect(browser.lastSetCookie[0]).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);
    expect((await browser.request('GET', '/api/agent-server/auth/session')).status).toBe(200);
  });
});
