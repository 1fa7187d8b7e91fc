/**
 * OAuth for MCP servers on the real stack: a real authorization server
 * (oidc-provider: dynamic registration, PKCE, resource indicators, client
 * credentials, revocation, RFC 9207 `iss`), an MCP server built with the SDK
 * that admits only the access tokens that authorization server issued for
 * it, and the API. A person's browser is played by following redirects by
 * hand (cookies kept) up to our callback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../core/db/knex.js';
import {
  ADMIN,
  browseToCallback,
  closeServer,
  MACHINE_SECRET,
  PRE,
  PRE_SECRET,
  SCOPE,
  startAuthorizationServer,
  startProtectedMcp,
  type AuthorizationServer,
  type ProtectedMcp,
} from '../fixtures/oauth-servers.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName } from '../helpers/factories.js';
import { freePort } from '../helpers/ports.js';
import { databaseUrl } from '../helpers/services.js';

const M = '/api/agent-server/mcp-servers';

describe('OAuth for MCP servers', () => {
  let api: TestApi;
  let db: Db;
  let as: AuthorizationServer;
  let mcp: ProtectedMcp;
  let callback: string;
  /** Every API answer's text, to look for tokens in. */
  const answers: string[] = [];

  const request = async <T>(method: string, path: string, body?: unknown) => {
    const res = await api.request<T>(method, path, body);
    answers.push(res.text);
    return res;
  };

  beforeAll(async () => {
    const port = await freePort();
    callback = `http://127.0.0.1:${port}/oauth/callback`;
    // The MCP server's URL is known once it listens; the authorization server asks for it lazily.
    let endpoint = '';
    as = await startAuthorizationServer(() => endpoint, callback);
    mcp = await startProtectedMcp(
      () => as.oidc,
      () => as.issuer,
    );
    endpoint = mcp.endpoint();
    api = await startTestApi({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` });
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await api?.close();
    await db?.destroy();
    if (mcp) await closeServer(mcp.server);
    if (as) await closeServer(as.server);
  });

  async function createServerFor(projectId: string, extra: Record<string, unknown> = {}) {
    const res = await request<{ id: string }>('POST', `${M}?project_id=${projectId}`, {
      name: uniqueName('oauth'),
      endpoint: mcp.endpoint(),
      ...extra,
    });
    expect(res.status, res.text).toBe(200);
    return res.body.data.id;
  }

  async function authorizeInBrowser(id: string): Promise<string> {
    const started = await request<{ authorization_url: string }>('POST', `${M}/${id}/authorize`, {});
    expect(started.status, started.text).toBe(200);
    const url = started.body.data.authorization_url;
    expect(url.startsWith(`${as.issuer}/`)).toBe(true);
    return browseToCallback(url, callback);
  }

  async function storedTokens(id: string): Promise<string[]> {
    const row = (await db('mcp_oauth_credentials').where({ server_id: id, end_user_id: '' }).first()) as
      { tokens_enc: string | null; client_info_enc: string | null } | undefined;
    if (!row?.tokens_enc) return [];
    const t = api.server.deps.secrets.decryptJson<{ access_token: string; refresh_token?: string }>(
      row.tokens_enc,
    );
    return [t.access_token, t.refresh_token].filter((v): v is string => !!v);
  }

  it('authorizes through the browser, then inspect lists the tools; tokens never come back out', async () => {
    const project = await createProject(api);
    const id = await createServerFor(project.id);
    const before = await request<{ authorization: { status: string } }>('GET', `${M}/${id}`);
    expect(before.body.data.authorization).toEqual({ status: 'not_configured' });

    // Without authorization, inspect says what to open instead of failing.
    const refused = await request('POST', `${M}/${id}/inspect`);
    expect(refused.status, refused.text).toBe(409);
    expect(String(refused.body.errorDetails.authorization_url)).toMatch(new RegExp(`^${as.issuer}/`));

    const back = await authorizeInBrowser(id);
    const page = await fetch(back);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Authorized — you can close this window');

    const inspected = await request<{ tools: Array<{ name: string }> }>('POST', `${M}/${id}/inspect`);
    expect(inspected.status, inspected.text).toBe(200);
    expect(inspected.body.data.tools.map((t) => t.name)).toEqual(['whoami']);
    expect(mcp.seenAuthorization.at(-1)).toMatch(/^Bearer /);

    const after = await request<{
      authorization: { status: string; scopes?: string[]; expires_at?: string };
    }>('GET', `${M}/${id}`);
    expect(after.body.data.authorization).toMatchObject({ status: 'authorized', scopes: [SCOPE] });
    expect(after.body.data.authorization.expires_at).toMatch(/^\d{4}-/);

    // The same callback again: its state is spent.
    const replay = await fetch(back);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('unknown, already used or expired');

    const tokens = await storedTokens(id);
    expect(tokens.length).toBeGreaterThan(0);
    const all = answers.join('\n') + api.logs.text;
    for (const t of tokens) expect(all).not.toContain(t);
    expect(all).not.toContain(new URL(back).searchParams.get('code')!);

    // Forgetting the authorization: revoked at the authorization server, and inspect asks again.
    const forgot = await request('DELETE', `${M}/${id}/authorization`);
    expect(forgot.status, forgot.text).toBe(200);
    expect(as.revoked.length).toBeGreaterThan(0);
    expect(await storedTokens(id)).toEqual([]);
    const again = await request('POST', `${M}/${id}/inspect`);
    expect(again.status, again.text).toBe(409);
  });

  it('refuses an unknown state, and an answer whose iss is not the authorization server', async () => {
    const unknown = await fetch(`${api.url}/oauth/callback?code=abc&state=nobody-made-this`);
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get('content-type')).toMatch(/text\/html/);

    const project = await createProject(api);
    const id = await createServerFor(project.id);
    const back = new URL(await authorizeInBrowser(id));
    expect(back.searchParams.get('iss')).toBe(as.issuer);
    back.searchParams.set('iss', 'https://impostor.example');
    const page = await fetch(back);
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('(iss)');
    expect(await storedTokens(id)).toEqual([]);
  });

  it('uses a pre-registered client (client_secret_post) and redacts its secret', async () => {
    const project = await createProject(api);
    const oauth = {
      client_id: 'pre-registered',
      client_secret: PRE_SECRET,
      token_endpoint_auth_method: 'client_secret_post',
      scopes: [SCOPE],
    };
    const id = await createServerFor(project.id, { oauth });
    const got = await request<{ oauth: Record<string, unknown>; authorization: { status: string } }>(
      'GET',
      `${M}/${id}`,
    );
    expect(got.body.data.oauth).toEqual({ ...oauth, client_secret: '[redacted]' });
    expect(got.body.data.authorization.status).toBe('unauthorized');

    // Sent back as read: the secret is kept.
    const patched = await request<{ oauth: Record<string, unknown> }>('PATCH', `${M}/${id}`, {
      oauth: got.body.data.oauth,
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data.oauth.client_secret).toBe('[redacted]');
    const row = (await db('mcp_servers').where({ id }).first()) as { oauth_enc: string };
    expect(api.server.deps.secrets.decryptJson(row.oauth_enc)).toEqual(oauth);

    const back = await authorizeInBrowser(id);
    expect(new URL(back).searchParams.get('code')).toBeTruthy();
    expect((await fetch(back)).status).toBe(200);
    const inspected = await request<{ tools: Array<{ name: string }> }>('POST', `${M}/${id}/inspect`);
    expect(inspected.status, inspected.text).toBe(200);
    expect(answers.join('\n')).not.toContain(PRE_SECRET);
  });

  it('gets a client_credentials token without anyone', async () => {
    const project = await createProject(api);
    const id = await createServerFor(project.id, {
      oauth: {
        grant: 'client_credentials',
        client_id: 'machine',
        client_secret: MACHINE_SECRET,
        token_endpoint_auth_method: 'client_secret_basic',
        scopes: [SCOPE],
      },
    });
    const authorized = await request('POST', `${M}/${id}/authorize`, {});
    expect(authorized.status, authorized.text).toBe(200);
    expect(authorized.body.data).toEqual({ status: 'authorized' });
    const inspected = await request<{ tools: Array<{ name: string }> }>('POST', `${M}/${id}/inspect`);
    expect(inspected.status, inspected.text).toBe(200);
    expect(inspected.body.data.tools.map((t) => t.name)).toEqual(['whoami']);
    expect(answers.join('\n')).not.toContain(MACHINE_SECRET);
  });

  it('asks a person for a wider scope on 403 insufficient_scope (step-up)', async () => {
    const project = await createProject(api);
    // A registered client would be held to the scope it registered with: this one may ask for any.
    const id = await createServerFor(project.id, {
      endpoint: mcp.endpoint('/admin'),
      oauth: PRE,
    });
    expect((await fetch(await authorizeInBrowser(id))).status).toBe(200);
    // Connected with mcp:tools; listing needs mcp:admin: a new authorization, not a refresh.
    const stepUp = await request('POST', `${M}/${id}/inspect`);
    expect(stepUp.status, stepUp.text).toBe(409);
    const url = new URL(String(stepUp.body.errorDetails.authorization_url));
    // The scopes held and the one the server asked for; offline_access too, the authorization server offering it.
    expect(url.searchParams.get('scope')?.split(' ')).toEqual([SCOPE, ADMIN, 'offline_access']);
    const steppedBack = await browseToCallback(url.href, callback);
    const steppedPage = await fetch(steppedBack);
    expect(steppedPage.status, `${steppedBack} ${await steppedPage.text()}`).toBe(200);
    const inspected = await request<{ tools: Array<{ name: string }> }>('POST', `${M}/${id}/inspect`);
    expect(inspected.status, inspected.text).toBe(200);
  });

  it('stops asking after 3 authorizations for the same scope that the server keeps refusing', async () => {
    const project = await createProject(api);
    const id = await createServerFor(project.id, {
      endpoint: mcp.endpoint('/never'),
      oauth: PRE,
    });
    expect((await fetch(await authorizeInBrowser(id))).status).toBe(200);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const refused = await request('POST', `${M}/${id}/inspect`);
      expect(refused.status, refused.text).toBe(409);
      const url = String(refused.body.errorDetails.authorization_url);
      expect((await fetch(await browseToCallback(url, callback))).status).toBe(200);
    }
    const gaveUp = await request('POST', `${M}/${id}/inspect`);
    expect(gaveUp.status, gaveUp.text).toBe(502);
    expect(String(gaveUp.body.errorDetails.reason)).toContain('keeps refusing the scopes granted');
  });

  it('keeps tokens per end user when per_user_tokens is set', async () => {
    const project = await createProject(api);
    const id = await createServerFor(project.id, { per_user_tokens: true });
    const started = await request<{ authorization_url: string }>('POST', `${M}/${id}/authorize`, {
      end_user_id: 'bob',
    });
    expect(started.status, started.text).toBe(200);
    expect((await fetch(await browseToCallback(started.body.data.authorization_url, callback))).status).toBe(
      200,
    );
    const rows: Array<{ end_user_id: string; tokens_enc: string | null }> = await db('mcp_oauth_credentials')
      .where({ server_id: id })
      .select('end_user_id', 'tokens_enc');
    expect(rows.filter((r) => r.tokens_enc).map((r) => r.end_user_id)).toEqual(['bob']);
    // The project's own credentials are not bob's.
    const got = await request<{ authorization: { status: string } }>('GET', `${M}/${id}`);
    expect(got.body.data.authorization.status).toBe('unauthorized');
    const forgot = await request('DELETE', `${M}/${id}/authorization?end_user_id=bob`);
    expect(forgot.status, forgot.text).toBe(200);
    expect(
      await db('mcp_oauth_credentials').where({ server_id: id, end_user_id: 'bob' }).first(),
    ).toBeUndefined();
  });

  it('validates the oauth settings and end_user_id, naming the field', async () => {
    const project = await createProject(api);
    const missing = await request('POST', `${M}?project_id=${project.id}`, {
      name: uniqueName('oauth'),
      endpoint: mcp.endpoint(),
      oauth: { grant: 'client_credentials', client_id: 'machine' },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.errorDetails.fields?.map((f) => f.field)).toContain('oauth.client_secret');

    const id = await createServerFor(project.id);
    const perUser = await request('POST', `${M}/${id}/authorize`, { end_user_id: 'bob' });
    expect(perUser.status).toBe(400);
    expect(perUser.body.errorDetails.fields?.map((f) => f.field)).toEqual(['end_user_id']);
  });

  it('serves the client metadata document', async () => {
    const res = await fetch(`${api.url}/oauth/client-metadata.json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      client_id: `${api.config.publicUrl}/oauth/client-metadata.json`,
      client_name: 'agent-server',
      redirect_uris: [callback],
      token_endpoint_auth_method: 'none',
    });
  });
});
