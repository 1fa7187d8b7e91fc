/**
 * OAuth for MCP servers on the real stack: a real authorization server
 * (oidc-provider: dynamic registration, PKCE, resource indicators, client
 * credentials, revocation, RFC 9207 `iss`), an MCP server built with the SDK
 * that admits only the access tokens that authorization server issued for
 * it, and the API. A person's browser is played by following redirects by
 * hand (cookies kept) up to our callback.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../core/db/knex.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName } from '../helpers/factories.js';
import { freePort } from '../helpers/ports.js';
import { databaseUrl } from '../helpers/services.js';

const M = '/api/agent-server/mcp-servers';
const SCOPE = 'mcp:tools';
const ADMIN = 'mcp:admin';
const PRE_SECRET = 'pre-registered-secret-0123456789abcdef';
const MACHINE_SECRET = 'machine-secret-0123456789abcdef';
const PRE = {
  client_id: 'pre-registered',
  client_secret: PRE_SECRET,
  token_endpoint_auth_method: 'client_secret_post',
};

/** The part of oidc-provider's API the test uses (the package ships no types). */
interface OidcToken {
  isExpired: boolean;
  aud?: string | string[];
  scope?: string;
}
interface OidcGrant {
  addOIDCScope(scope: string): void;
  addResourceScope(resource: string, scope: string): void;
  save(): Promise<string>;
}
interface InteractionDetails {
  prompt: { name: string; details: Record<string, unknown> };
  params: Record<string, string>;
  session?: { accountId: string };
  grantId?: string;
}
interface Oidc {
  use(mw: (ctx: KoaLike, next: () => Promise<void>) => Promise<void>): void;
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
  interactionFinished(
    req: IncomingMessage,
    res: ServerResponse,
    result: Record<string, unknown>,
    opts?: { mergeWithLastSubmission?: boolean },
  ): Promise<void>;
  Grant: {
    new (init: { accountId: string; clientId: string }): OidcGrant;
    find(id: string): Promise<OidcGrant>;
  };
  AccessToken: { find(token: string): Promise<OidcToken | undefined> };
  ClientCredentials: { find(token: string): Promise<OidcToken | undefined> };
}
interface KoaLike {
  path: string;
  req: IncomingMessage;
  res: ServerResponse;
  respond: boolean;
}

interface Running {
  url: string;
  server: Server;
}

async function listen(server: Server, port = 0): Promise<Running> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}`, server };
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** The authorization server: log-in and consent are given at once to whoever asks. */
async function startAuthorizationServer(resource: () => string, callbackUrl: string) {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  // A module name in a variable: the package ships no types, the interface above says what is used.
  const packageName = 'oidc-provider';
  const mod = (await import(packageName)) as {
    default: new (issuer: string, config: Record<string, unknown>) => Oidc;
  };
  const revoked: string[] = [];
  const oidc = new mod.default(issuer, {
    clients: [
      {
        client_id: 'pre-registered',
        client_secret: PRE_SECRET,
        redirect_uris: [callbackUrl],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
      {
        client_id: 'machine',
        client_secret: MACHINE_SECRET,
        redirect_uris: [],
        response_types: [],
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource(),
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => ({
          scope: `${SCOPE} ${ADMIN}`,
          accessTokenFormat: 'opaque',
          audience: indicator,
        }),
      },
    },
    scopes: ['openid', 'offline_access', SCOPE, ADMIN],
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
  });
  oidc.use(async (ctx, next) => {
    if (ctx.path === '/token/revocation') revoked.push('revocation');
    if (!ctx.path.startsWith('/interaction/')) return next();
    ctx.respond = false;
    const details = await oidc.interactionDetails(ctx.req, ctx.res);
    if (details.prompt.name === 'login') {
      await oidc.interactionFinished(
        ctx.req,
        ctx.res,
        { login: { accountId: 'alice' } },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    const grant = details.grantId
      ? await oidc.Grant.find(details.grantId)
      : new oidc.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id! });
    const missing = details.prompt.details;
    if (Array.isArray(missing.missingOIDCScope)) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    const resourceScopes = (missing.missingResourceScopes ?? {}) as Record<string, string[]>;
    for (const [indicator, scopes] of Object.entries(resourceScopes))
      grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    await oidc.interactionFinished(
      ctx.req,
      ctx.res,
      { consent: { grantId } },
      { mergeWithLastSubmission: true },
    );
  });
  const running = await listen(createServer(oidc.callback()), port);
  return { ...running, issuer, oidc, revoked };
}

/**
 * An MCP server guarded by bearer tokens the authorization server issued for
 * it (RFC 9728 metadata, 401 challenges), at three paths: `/mcp` lists its
 * tools to any token for it, `/admin` lists them only with the `mcp:admin`
 * scope (a 403 insufficient_scope asks for it), `/never` always answers
 * tools/list with that 403, however often it is authorized.
 */
async function startProtectedMcp(oidc: () => Oidc, issuer: () => string) {
  let base = '';
  const seenAuthorization: string[] = [];
  const prm = (path: string) => ({
    resource: `${base}${path}`,
    authorization_servers: [issuer()],
    scopes_supported: [SCOPE],
  });
  const tokenScopes = async (path: string, header: string | undefined): Promise<string[] | undefined> => {
    const token = header?.startsWith('Bearer ') ? header.slice(7) : undefined;
    if (!token) return undefined;
    const found = (await oidc().AccessToken.find(token)) ?? (await oidc().ClientCredentials.find(token));
    if (!found || found.isExpired) return undefined;
    const aud = Array.isArray(found.aud) ? found.aud : [found.aud];
    const scopes = (found.scope ?? '').split(' ');
    return aud.includes(`${base}${path}`) && scopes.includes(SCOPE) ? scopes : undefined;
  };
  const challenge = (res: ServerResponse, path: string, status: 401 | 403, scope: string) =>
    res
      .writeHead(status, {
        'content-type': 'application/json',
        'www-authenticate':
          `Bearer ${status === 403 ? 'error="insufficient_scope", ' : ''}` +
          `resource_metadata="${base}/.well-known/oauth-protected-resource${path}", scope="${scope}"`,
      })
      .end(JSON.stringify({ error: status === 403 ? 'insufficient_scope' : 'invalid_token' }));
  const server = createServer((req, res) => {
    void (async () => {
      const wellKnown = '/.well-known/oauth-protected-resource';
      if (req.method === 'GET' && req.url?.startsWith(wellKnown)) {
        const path = req.url.slice(wellKnown.length) || '/mcp';
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(prm(path)));
        return;
      }
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      const path = (req.url ?? '/mcp').split('?')[0]!;
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString() || 'null') as { method?: string } | null;
      seenAuthorization.push(req.headers.authorization ?? '-');
      const scopes = await tokenScopes(path, req.headers.authorization);
      if (!scopes) return challenge(res, path, 401, SCOPE);
      if (
        body?.method === 'tools/list' &&
        (path === '/never' || (path === '/admin' && !scopes.includes(ADMIN)))
      )
        return challenge(res, path, 403, `${SCOPE} ${ADMIN}`);
      const mcp = new McpServer({ name: 'oauth-test', version: '1.0.0' });
      mcp.registerTool('whoami', { description: 'Says hello to the authorized caller' }, () => ({
        content: [{ type: 'text', text: 'hello alice' }],
      }));
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res, body);
    })();
  });
  const running = await listen(server);
  base = running.url;
  return { ...running, endpoint: `${base}/mcp`, seenAuthorization };
}

/** Plays the person's browser from the authorization URL to (not into) our callback: the callback's URL. */
async function browseToCallback(authorizationUrl: string, callbackPrefix: string): Promise<string> {
  const jar = new Map<string, string>();
  let next = authorizationUrl;
  for (let hop = 0; hop < 12; hop++) {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(next, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(';')[0]!;
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const location = res.headers.get('location');
    if (!location) throw new Error(`no redirect from ${next}: HTTP ${res.status} ${await res.text()}`);
    await res.body?.cancel();
    next = new URL(location, next).href;
    if (next.startsWith(callbackPrefix)) return next;
  }
  throw new Error('the authorization server never sent the browser back');
}

describe('OAuth for MCP servers', () => {
  let api: TestApi;
  let db: Db;
  let as: Awaited<ReturnType<typeof startAuthorizationServer>>;
  let mcp: Awaited<ReturnType<typeof startProtectedMcp>>;
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
    endpoint = mcp.endpoint;
    api = await startTestApi({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` });
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await api?.close();
    await db?.destroy();
    if (mcp) await close(mcp.server);
    if (as) await close(as.server);
  });

  async function createServerFor(projectId: string, extra: Record<string, unknown> = {}) {
    const res = await request<{ id: string }>('POST', `${M}?project_id=${projectId}`, {
      name: uniqueName('oauth'),
      endpoint: mcp.endpoint,
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
      endpoint: mcp.endpoint.replace(/\/mcp$/, '/admin'),
      oauth: PRE,
    });
    expect((await fetch(await authorizeInBrowser(id))).status).toBe(200);
    // Connected with mcp:tools; listing needs mcp:admin: a new authorization, not a refresh.
    const stepUp = await request('POST', `${M}/${id}/inspect`);
    expect(stepUp.status, stepUp.text).toBe(409);
    const url = new URL(String(stepUp.body.errorDetails.authorization_url));
    expect(url.searchParams.get('scope')).toBe(`${SCOPE} ${ADMIN}`);
    const steppedBack = await browseToCallback(url.href, callback);
    const steppedPage = await fetch(steppedBack);
    expect(steppedPage.status, `${steppedBack} ${await steppedPage.text()}`).toBe(200);
    const inspected = await request<{ tools: Array<{ name: string }> }>('POST', `${M}/${id}/inspect`);
    expect(inspected.status, inspected.text).toBe(200);
  });

  it('stops asking after 3 authorizations for the same scope that the server keeps refusing', async () => {
    const project = await createProject(api);
    const id = await createServerFor(project.id, {
      endpoint: mcp.endpoint.replace(/\/mcp$/, '/never'),
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
      endpoint: mcp.endpoint,
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
