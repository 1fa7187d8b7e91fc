/**
 * Single sign-on against a real OpenID provider (oidc-provider, its own login
 * form), the person's browser played by following redirects by hand: the
 * session cookie it ends with works, the groups claim gives roles through
 * AUTH_GROUP_ROLES, a state works once and only in the browser that began
 * the login, another replica finishes what one began, a deactivated user is
 * refused, and every outcome is in the audit log.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialDigest } from '../../../core/auth/secrets.js';
import { createDb, type Db } from '../../../core/db/knex.js';
import {
  SSO_CLIENT_ID,
  SSO_CLIENT_SECRET,
  signInAtProvider,
  startLoginProvider,
  type AccountClaims,
  type LoginProvider,
} from '../../fixtures/oidc-login-provider.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { uniqueName } from '../../helpers/factories.js';
import { freePort } from '../../helpers/ports.js';
import { databaseUrl } from '../../helpers/services.js';

const LOGIN = '/api/agent-server/auth/oidc/login';
const CALLBACK = '/api/agent-server/auth/oidc/callback';

interface Landing {
  status: number;
  location: string;
  /** The session cookie's value, when one was set. */
  session: string | undefined;
  setCookie: string[];
}

describe('single sign-on with OpenID Connect', () => {
  let provider: LoginProvider;
  let api: TestApi;
  /** A second replica-like API with OIDC_JIT=false. */
  let noJit: TestApi;
  /** How `api` was configured but its port: a replica behind the same PUBLIC_URL. */
  let apiEnv: Record<string, string>;
  let db: Db;

  beforeAll(async () => {
    const [port, noJitPort] = [await freePort(), await freePort()];
    const base = `http://127.0.0.1:${port}`;
    const noJitBase = `http://127.0.0.1:${noJitPort}`;
    provider = await startLoginProvider([base + CALLBACK, noJitBase + CALLBACK]);
    const env = {
      AUTH_MODE: 'users',
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: SSO_CLIENT_ID,
      OIDC_CLIENT_SECRET: SSO_CLIENT_SECRET,
      AUTH_GROUP_ROLES: JSON.stringify({ admins: { org_role: 'admin' } }),
    };
    apiEnv = { ...env, PUBLIC_URL: base };
    api = await startTestApi({ ...apiEnv, PORT: String(port) });
    noJit = await startTestApi({ ...env, PORT: String(noJitPort), PUBLIC_URL: noJitBase, OIDC_JIT: 'false' });
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await api?.close();
    await noJit?.close();
    await db?.destroy();
    await provider?.close();
  });

  /** A subject of its own per test, with these claims at the provider. */
  function account(claims: AccountClaims = {}): string {
    const sub = `sso-${randomUUID().slice(0, 8)}`;
    provider.accounts.set(sub, claims);
    return sub;
  }

  /**
   * GET /login as the console's button does: the provider's URL, and the
   * cookie tying the login to this browser (sent back to the callback).
   */
  async function startLogin(on: TestApi, returnTo?: string): Promise<{ location: string; began: string }> {
    const query = returnTo === undefined ? '' : `?return_to=${encodeURIComponent(returnTo)}`;
    const res = await fetch(`${on.url}${LOGIN}${query}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    expect(location.startsWith(`${provider.issuer}/`), location).toBe(true);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('ags_oidc_state='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toContain(`Path=${CALLBACK}`);
    return { location, began: cookie.split(';')[0]! };
  }

  async function land(url: string, began?: string): Promise<Landing> {
    const res = await fetch(url, { redirect: 'manual', headers: began ? { cookie: began } : {} });
    await res.body?.cancel();
    const setCookie = res.headers.getSetCookie();
    const session = setCookie.map((c) => /^ags_session=([^;]+)/.exec(c)?.[1]).find((v) => v !== undefined);
    return { status: res.status, location: res.headers.get('location') ?? '', session, setCookie };
  }

  /** The whole login: our button, the provider's form as `sub`, back to our callback. */
  async function signIn(sub: string, opts: { on?: TestApi; returnTo?: string } = {}) {
    const on = opts.on ?? api;
    const { location, began } = await startLogin(on, opts.returnTo);
    const callbackUrl = await signInAtProvider(location, sub, on.url + CALLBACK);
    return { callbackUrl, began, landing: await land(callbackUrl, began) };
  }

  const errorOf = (landing: Landing) => {
    expect(landing.status).toBe(302);
    const url = new URL(landing.location, api.url);
    expect(url.pathname).toBe('/console/login');
    return url.searchParams.get('error') ?? '';
  };

  const withSession = (session: string, csrf?: string) => ({
    cookie: `ags_session=${session}`,
    ...(csrf ? { 'x-csrf-token': csrf } : {}),
  });

  async function csrfOf(session: string): Promise<string> {
    const row = await db('user_sessions')
      .where({ token_hash: credentialDigest(session) })
      .first<{ csrf_token: string }>('csrf_token');
    return row.csrf_token;
  }

  const userOf = (sub: string) =>
    db('users')
      .where({ oidc_issuer: `${provider.issuer}`, oidc_subject: sub })
      .first() as Promise<
      { id: string; user_name: string; org_role: string; idp_groups: string[]; active: boolean } | undefined
    >;

  const auditOf = (action: string, since: Date) =>
    db('audit_events').where({ action }).where('at', '>=', since).orderBy('at') as Promise<
      Array<{
        actor_type: string;
        actor_id: string | null;
        resource_id: string | null;
        before: Record<string, unknown> | null;
        after: Record<string, unknown> | null;
        details: Record<string, unknown>;
      }>
    >;

  it('signs a new person in as a member, sends them back to where they were, and the cookie is a session', async () => {
    const since = new Date(Date.now() - 1_000);
    const sub = account({ email: `${uniqueName('ann')}@example.test`, email_verified: true, name: 'Ann' });
    const { landing } = await signIn(sub, { returnTo: '/console/agents?tab=all' });
    expect(landing.status).toBe(302);
    expect(landing.location).toBe('/console/agents?tab=all');
    expect(landing.session).toBeDefined();
    const cookie = landing.setCookie.find((c) => c.startsWith('ags_session='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);

    const user = await userOf(sub);
    expect(user).toMatchObject({ org_role: 'member', active: true, idp_groups: [] });
    const projects = await api.request(
      'GET',
      '/api/agent-server/projects',
      undefined,
      withSession(landing.session!),
    );
    expect(projects.status, projects.text).toBe(200);
    expect((await api.request('GET', '/api/agent-server/projects')).status).toBe(401);

    const logins = (await auditOf('auth.login', since)).filter((e) => e.actor_id === user!.id);
    expect(logins).toHaveLength(1);
    expect(logins[0]!.actor_type).toBe('user');
    expect(logins[0]!.details).toMatchObject({ method: 'oidc', subject: sub, provisioned: true });
    expect(JSON.stringify(logins)).not.toContain(landing.session);
    // Made by single sign-on: a user.create of its own, before the login.
    const made = (await auditOf('user.create', since)).filter((e) => e.resource_id === user!.id);
    expect(made).toHaveLength(1);
    expect(made[0]!.actor_type).toBe('system');
    expect(made[0]!.after).toMatchObject({ org_role: 'member', oidc_subject: sub, display_name: 'Ann' });
  });

  it('maps the groups claim to roles: a member of "admins" may create a provider, someone in no group may not', async () => {
    const admin = account({ groups: ['admins', 'staff'] });
    const plain = account({ groups: ['staff'] });
    const asAdmin = (await signIn(admin)).landing.session!;
    const asPlain = (await signIn(plain)).landing.session!;
    expect((await userOf(admin))!.idp_groups).toEqual(['admins', 'staff']);

    const body = { name: uniqueName('sso-provider'), provider_type: 'openai', api_key: 'sk-test-0123456789' };
    const made = await api.request(
      'POST',
      '/api/agent-server/providers',
      body,
      withSession(asAdmin, await csrfOf(asAdmin)),
    );
    expect(made.status, made.text).toBe(200);
    const refused = await api.request(
      'POST',
      '/api/agent-server/providers',
      { ...body, name: uniqueName('sso-provider') },
      withSession(asPlain, await csrfOf(asPlain)),
    );
    expect(refused.status, refused.text).toBe(403);

    // The claim is read at every login: out of the group at the provider, out of the role here.
    const since = new Date(Date.now() - 1_000);
    provider.accounts.set(admin, { groups: [] });
    const again = (await signIn(admin)).landing.session!;
    const now = await api.request(
      'POST',
      '/api/agent-server/providers',
      { ...body, name: uniqueName('sso-provider') },
      withSession(again, await csrfOf(again)),
    );
    expect(now.status, now.text).toBe(403);
    const adminId = (await userOf(admin))!.id;
    const changed = (await auditOf('user.update', since)).filter((e) => e.resource_id === adminId);
    expect(changed.map((e) => [e.before, e.after])).toEqual([
      [{ idp_groups: ['admins', 'staff'] }, { idp_groups: [] }],
    ]);
  });

  it('accepts a state once: the same callback again is refused and makes no session', async () => {
    const since = new Date(Date.now() - 1_000);
    const sub = account();
    const { callbackUrl, began, landing } = await signIn(sub);
    expect(landing.session).toBeDefined();
    const replay = await land(callbackUrl, began);
    expect(replay.session).toBeUndefined();
    expect(errorOf(replay)).toMatch(/expired or was already used/);
    const failed = await auditOf('auth.login_failed', since);
    expect(failed.some((e) => e.details.reason === 'unknown_state' && e.actor_type === 'anonymous')).toBe(
      true,
    );
  });

  it("refuses a callback this browser did not begin: someone else's code and state make no session", async () => {
    // Login CSRF: the sender signs in at the provider and hands their callback URL to someone else.
    const sender = await startLogin(api);
    const callbackUrl = await signInAtProvider(sender.location, account(), api.url + CALLBACK);
    const receiver = await startLogin(api);
    const elsewhere = await land(callbackUrl, receiver.began);
    expect(elsewhere.session).toBeUndefined();
    expect(errorOf(elsewhere)).toMatch(/started in another browser/);
    const noCookie = await land(callbackUrl);
    expect(noCookie.session).toBeUndefined();
    expect(errorOf(noCookie)).toMatch(/expired or was already used/);
    // Neither used the state up: the browser that began the login still finishes it.
    expect((await land(callbackUrl, sender.began)).session).toBeDefined();
  });

  it('refuses a deactivated user, and says so', async () => {
    const since = new Date(Date.now() - 1_000);
    const sub = account();
    expect((await signIn(sub)).landing.session).toBeDefined();
    const user = (await userOf(sub))!;
    await db('users').where({ id: user.id }).update({ active: false });
    const { landing } = await signIn(sub);
    expect(landing.session).toBeUndefined();
    expect(errorOf(landing)).toMatch(/deactivated/);
    const failed = (await auditOf('auth.login_failed', since)).filter((e) => e.actor_id === user.id);
    expect(failed.map((e) => e.details.reason)).toEqual(['deactivated']);
  });

  it('links an existing account by a verified email, never by an unverified one', async () => {
    const verified = `${uniqueName('carol')}@example.test`;
    const [carol] = await db('users')
      .insert({ user_name: verified, email: verified })
      .returning<Array<{ id: string }>>('id');
    const { landing } = await signIn(account({ email: verified.toUpperCase(), email_verified: true }));
    expect(landing.session).toBeDefined();
    const row = await db('user_sessions')
      .where({ token_hash: credentialDigest(landing.session!) })
      .first<{ user_id: string }>('user_id');
    expect(row.user_id).toBe(carol!.id);
    const linked = await db('audit_events')
      .where({ action: 'user.update', resource_id: carol!.id })
      .first<{ details: Record<string, unknown> }>('details');
    expect(linked.details).toMatchObject({ method: 'oidc', linked_by_email: true });

    // A deactivated account is refused, and not linked on the way.
    const inactive = `${uniqueName('erin')}@example.test`;
    await db('users').insert({ user_name: inactive, email: inactive, active: false });
    const erin = account({ email: inactive, email_verified: true });
    expect(errorOf((await signIn(erin)).landing)).toMatch(/deactivated/);
    expect(await userOf(erin)).toBeUndefined();

    const unverified = `${uniqueName('dave')}@example.test`;
    await db('users').insert({ user_name: unverified, email: unverified });
    const refused = (await signIn(account({ email: unverified, email_verified: false }))).landing;
    expect(refused.session).toBeUndefined();
    expect(errorOf(refused)).toMatch(/already exists/);
  });

  it('sends the person back only inside the console', async () => {
    for (const returnTo of [
      'https://evil.example/console/',
      '//evil.example/console/',
      '/api/agent-server/projects',
      '/console/../x',
    ])
      expect((await signIn(account(), { returnTo })).landing.location, returnTo).toBe('/console/');
    expect((await signIn(account())).landing.location).toBe('/console/');
    expect((await signIn(account(), { returnTo: '/console' })).landing.location).toBe('/console');
  });

  it('ends a refused or broken callback on the sign-in page, never an error page', async () => {
    const started = await startLogin(api, '/console/');
    const state = new URL(started.location).searchParams.get('state')!;
    const cancelled = await land(
      `${api.url}${CALLBACK}?error=access_denied&state=${state}&iss=${encodeURIComponent(provider.issuer)}`,
      started.began,
    );
    expect(errorOf(cancelled)).toMatch(/did not sign you in/);
    expect(errorOf(await land(`${api.url}${CALLBACK}`))).toMatch(/expired or was already used/);
    expect(errorOf(await land(`${api.url}${CALLBACK}?state=nope&code=x`))).toMatch(
      /expired or was already used/,
    );
  });

  it('answers 404 where single sign-on is not configured', async () => {
    const plain = await startTestApi({ AUTH_MODE: 'users' });
    try {
      for (const path of [LOGIN, CALLBACK]) {
        const res = await plain.request('GET', path);
        expect(res.status, path).toBe(404);
        expect(res.body).toMatchObject({ error: true, status: 404 });
      }
    } finally {
      await plain.close();
    }
  });

  it('finishes on another replica a login one replica began', async () => {
    // A second replica behind the same PUBLIC_URL: the callback may reach either.
    const replica = await startTestApi({ ...apiEnv, PORT: '0' });
    try {
      const sub = account({ name: 'Rita' });
      const { location, began } = await startLogin(api);
      const callbackUrl = new URL(await signInAtProvider(location, sub, api.url + CALLBACK));
      const landing = await land(`${replica.url}${CALLBACK}${callbackUrl.search}`, began);
      expect(landing.location).toBe('/console/');
      expect(landing.session).toBeDefined();
      const projects = await api.request(
        'GET',
        '/api/agent-server/projects',
        undefined,
        withSession(landing.session!),
      );
      expect(projects.status, projects.text).toBe(200);
    } finally {
      await replica.close();
    }
  });

  it('sends the person back to the sign-in page when the provider cannot be reached', async () => {
    const gone = await freePort();
    const unreachable = await startTestApi({
      AUTH_MODE: 'users',
      OIDC_ISSUER: `http://127.0.0.1:${gone}`,
      OIDC_CLIENT_ID: SSO_CLIENT_ID,
    });
    try {
      const res = await fetch(`${unreachable.url}${LOGIN}`, { redirect: 'manual' });
      expect(res.status).toBe(302);
      const location = new URL(res.headers.get('location')!, unreachable.url);
      expect(location.pathname).toBe('/console/login');
      expect(location.searchParams.get('error')).toMatch(/could not be reached/);
    } finally {
      await unreachable.close();
    }
  });

  it('with OIDC_JIT=false signs in only people who already have an account', async () => {
    const sub = account();
    const refused = (await signIn(sub, { on: noJit })).landing;
    expect(refused.session).toBeUndefined();
    expect(new URL(refused.location, noJit.url).searchParams.get('error')).toMatch(/no account here yet/);
    expect(await userOf(sub)).toBeUndefined();
    // Made by the other server (or an administrator, or SCIM): now it works here too.
    expect((await signIn(sub)).landing.session).toBeDefined();
    expect((await signIn(sub, { on: noJit })).landing.session).toBeDefined();
  });
});
