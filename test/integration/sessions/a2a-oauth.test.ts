/**
 * Remote A2A agents behind OAuth 2, on the real stack: a real authorization
 * server (oidc-provider), a remote built with the official A2A SDK whose
 * card names that server in its `securitySchemes` and which admits only the
 * tokens it issued, the API, a worker process, the scripted vendor.
 * Client credentials get a token without anyone; an authorization-code
 * agent makes the run wait (`awaiting_authorization`) with the URL a person
 * opens, and our callback resumes it; an expired token is refreshed, a token
 * the remote refuses is replaced, and no token shows in an API answer.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import { startA2aTestAgent, type A2aTestAgent } from '../../fixtures/a2a-agents.js';
import {
  browseToCallback,
  closeServer,
  MACHINE_SECRET,
  PRE,
  SCOPE,
  startAuthorizationServer,
  type AuthorizationServer,
} from '../../fixtures/oauth-servers.js';
import { uniqueName } from '../../helpers/factories.js';
import { freePort } from '../../helpers/ports.js';
import { databaseUrl, noTemporal } from '../../helpers/services.js';
import { killHard, sessionEnv, spawnWorker, startFixture, waitFor, type Fixture } from './session-harness.js';

const A2A = '/api/agent-server/a2a-agents';

interface Run {
  run_id: string;
  status: string;
  output: { content: string } | null;
  pause: { reason: string; details: Record<string, unknown> } | null;
  tool_calls: Array<{ name: string; output?: string; is_error?: boolean }>;
}
interface A2aAgentView {
  id: string;
  name: string;
  oauth: Record<string, unknown> | null;
  authorization: { status: string; scopes?: string[] };
}
type ChatBody = { messages?: Array<{ role: string; content: unknown }> };

describe.skipIf(noTemporal())('remote A2A agents behind OAuth', () => {
  let fx: Fixture;
  let db: Db;
  let as: AuthorizationServer;
  let remote: A2aTestAgent;
  let callback: string;
  let worker: Awaited<ReturnType<typeof spawnWorker>> | undefined;
  /** Set by a test: the remote refuses the next token it is shown, whatever it is. */
  let refuseNext = false;
  /** Every API answer: looked through for tokens. */
  const seen: string[] = [];

  const request = async <T>(method: string, path: string, body?: unknown) => {
    const res = await fx.api.request<T>(method, path, body);
    seen.push(res.text);
    return res;
  };
  const run = async (id: string) => (await request<Run>('GET', `/api/agent-server/runs/${id}`)).body.data;

  beforeAll(async () => {
    const port = await freePort();
    callback = `http://127.0.0.1:${port}/oauth/callback`;
    let resource = '';
    as = await startAuthorizationServer(() => resource, callback);
    remote = await startA2aTestAgent({
      guard: {
        securitySchemes: () => ({
          person: {
            oauth2SecurityScheme: {
              description: 'a person signs in',
              flows: {
                authorizationCode: {
                  authorizationUrl: `${as.issuer}/auth`,
                  tokenUrl: `${as.issuer}/token`,
                  scopes: { [SCOPE]: 'use the agent' },
                  pkceRequired: true,
                },
              },
              oauth2MetadataUrl: `${as.issuer}/.well-known/openid-configuration`,
            },
          },
          machine: {
            oauth2SecurityScheme: {
              description: 'a service calls',
              flows: { clientCredentials: { tokenUrl: `${as.issuer}/token`, scopes: { [SCOPE]: 'use' } } },
            },
          },
        }),
        admits: async (header) => {
          const token = header?.startsWith('Bearer ') ? header.slice(7) : undefined;
          if (!token) return false;
          if (refuseNext) {
            refuseNext = false;
            return false;
          }
          const found =
            (await as.oidc.AccessToken.find(token)) ?? (await as.oidc.ClientCredentials.find(token));
          const aud = Array.isArray(found?.aud) ? found.aud : [found?.aud];
          return !!found && !found.isExpired && aud.includes(resource);
        },
      },
    });
    resource = `${remote.url}/a2a`;
    const env = sessionEnv({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` });
    fx = await startFixture(env);
    worker = await spawnWorker(env);
    db = createDb(databaseUrl());
  }, 90_000);
  afterAll(async () => {
    if (worker) await killHard(worker.child);
    await remote?.close();
    await fx?.close();
    await db?.destroy();
    if (as) await closeServer(as.server);
  });
  beforeEach(() => fx.vendor.reset());

  async function register(oauth: Record<string, unknown>) {
    const res = await request<A2aAgentView>('POST', `${A2A}?project_id=${fx.projectId}`, {
      name: uniqueName('guarded'),
      card_url: remote.cardUrl,
      oauth,
    });
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  }

  /** An agent listing the remote; its model calls the `answer` skill, then answers with what it heard. */
  async function agentCalling(remoteAgent: A2aAgentView, message: string) {
    const tool = `${remoteAgent.name.replace(/[^a-zA-Z0-9_-]/g, '_')}__answer`;
    fx.vendor.respond = (body) => {
      const last = (body as ChatBody).messages?.at(-1);
      if (last?.role === 'tool') return { reply: { text: `remote said: ${String(last.content)}` } };
      return { reply: { tool_calls: [{ name: tool, arguments: { message } }] } };
    };
    return fx.agent({ a2a_agents: [{ a2a_agent_id: remoteAgent.id }] });
  }

  const bearer = () => remote.authorizations.at(-1) ?? '';

  it('client credentials: the call gets a token without anyone, and the remote admits it', async () => {
    const created = await register({
      grant: 'client_credentials',
      client_id: 'machine',
      client_secret: MACHINE_SECRET,
      token_endpoint_auth_method: 'client_secret_basic',
    });
    expect(created.oauth).toMatchObject({ client_id: 'machine', client_secret: '[redacted]' });
    expect(created.authorization.status).toBe('unauthorized');
    const agent = await agentCalling(created, 'hello');
    const res = await fx.converse({ agent_id: agent.id, message: 'ask the remote' });
    expect(res.body.data.status, res.text).toBe('completed');
    expect(res.body.data.output?.content).toBe('remote said: answer to hello');
    expect(bearer()).toMatch(/^Bearer .{20,}/);
    const shown = await request<A2aAgentView>('GET', `${A2A}/${created.id}`);
    expect(shown.body.data.authorization).toMatchObject({ status: 'authorized', scopes: [SCOPE] });
  }, 60_000);

  it('authorization code: the run waits with the URL, a person authorizes, the run goes on', async () => {
    const created = await register({ ...PRE, scopes: [SCOPE] });
    const agent = await agentCalling(created, 'hi');
    const before = remote.messages.length;
    const started = await fx.converse({ agent_id: agent.id, message: 'ask the remote' });
    expect(started.status, started.text).toBe(200);
    const runId = started.body.data.run_id;
    const waiting = await waitFor(
      async () => {
        const r = await run(runId);
        return r.status === 'awaiting_authorization' ? r : undefined;
      },
      20_000,
      'the run to wait for authorization',
    );
    expect(waiting.pause?.details).toMatchObject({ server_id: created.id, server_kind: 'a2a' });
    const url = new URL(String(waiting.pause?.details.authorization_url));
    expect(url.origin).toBe(as.issuer);
    expect(url.searchParams.get('client_id')).toBe(PRE.client_id);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('redirect_uri')).toBe(callback);
    // Nothing was sent before the person authorized.
    expect(remote.messages.length).toBe(before);

    const back = await browseToCallback(url.href, callback);
    const page = await fetch(back);
    expect(page.status, await page.text()).toBe(200);
    const done = await waitFor(
      async () => {
        const r = await run(runId);
        return r.status === 'completed' ? r : undefined;
      },
      30_000,
      'the run to complete',
    );
    expect(done.output?.content).toBe('remote said: answer to hi');
    expect(remote.messages.length - before).toBe(1);
    const shown = await request<A2aAgentView>('GET', `${A2A}/${created.id}`);
    expect(shown.body.data.authorization.status).toBe('authorized');

    // An expired token is refreshed without anyone; a token the remote refuses is replaced the same way.
    await db('mcp_oauth_credentials')
      .where({ a2a_agent_id: created.id })
      .update({ expires_at: new Date(Date.now() - 1_000) });
    const firstBearer = bearer();
    const refreshed = await fx.converse({ agent_id: agent.id, message: 'again' });
    expect(refreshed.body.data.status, refreshed.text).toBe('completed');
    expect(bearer()).not.toBe(firstBearer);
    refuseNext = true;
    const secondBearer = bearer();
    const replaced = await fx.converse({ agent_id: agent.id, message: 'once more' });
    expect(replaced.body.data.status, replaced.text).toBe('completed');
    expect(replaced.body.data.output?.content).toBe('remote said: answer to hi');
    expect(bearer()).not.toBe(secondBearer);

    // Forgotten: the next call asks a person again.
    expect((await request('DELETE', `${A2A}/${created.id}/authorization`)).status).toBe(200);
    const forgotten = await request<A2aAgentView>('GET', `${A2A}/${created.id}`);
    expect(forgotten.body.data.authorization.status).toBe('unauthorized');
    const asked = await request<{ authorization_url?: string }>('POST', `${A2A}/${created.id}/authorize`, {});
    expect(asked.status, asked.text).toBe(200);
    expect(asked.body.data.authorization_url).toMatch(new RegExp(`^${as.issuer}/auth\\?`));
  }, 90_000);

  it('per-user tokens: each end user authorizes on their own; the run waits for its own user', async () => {
    const res = await request<A2aAgentView>('POST', `${A2A}?project_id=${fx.projectId}`, {
      name: uniqueName('per-user'),
      card_url: remote.cardUrl,
      oauth: { ...PRE, scopes: [SCOPE] },
      per_user_tokens: true,
    });
    expect(res.status, res.text).toBe(200);
    const created = res.body.data;
    const agent = await agentCalling(created, 'mine');
    const waitingFor = async (endUser: string) => {
      const started = await fx.converse({ agent_id: agent.id, message: 'go', end_user_id: endUser });
      expect(started.status, started.text).toBe(200);
      const runId = started.body.data.run_id;
      const waiting = await waitFor(
        async () => {
          const r = await run(runId);
          return r.status === 'awaiting_authorization' ? r : undefined;
        },
        20_000,
        `${endUser}'s run to wait for authorization`,
      );
      expect(waiting.pause?.details).toMatchObject({ server_id: created.id, end_user_id: endUser });
      return { runId, url: String(waiting.pause?.details.authorization_url) };
    };
    const alice = await waitingFor('alice');
    await fetch(await browseToCallback(alice.url, callback));
    const done = await waitFor(
      async () => {
        const r = await run(alice.runId);
        return r.status === 'completed' ? r : undefined;
      },
      30_000,
      "alice's run to complete",
    );
    expect(done.output?.content).toBe('remote said: answer to mine');
    // Alice's token is hers: bob is asked on his own, and alice goes on without being asked.
    await waitingFor('bob');
    const again = await fx.converse({ agent_id: agent.id, message: 'again', end_user_id: 'alice' });
    expect(again.body.data.status, again.text).toBe('completed');
    const rows = await db('mcp_oauth_credentials')
      .where({ a2a_agent_id: created.id })
      .whereNotNull('tokens_enc')
      .pluck('end_user_id');
    expect(rows).toEqual(['alice']);
  }, 90_000);

  it('refuses what cannot work, naming why; no token ever shows in an answer', async () => {
    // The card offers a clientCredentials flow, but this one is not registered for it at the authorization server.
    const wrong = await register({
      grant: 'client_credentials',
      client_id: 'nobody',
      client_secret: 'x'.repeat(24),
    });
    const failed = await request<unknown>('POST', `${A2A}/${wrong.id}/authorize`, {});
    expect(failed.status).toBe(502);
    expect(JSON.stringify(failed.body.errorDetails)).toContain('authorization server');
    expect(JSON.stringify(failed.body)).not.toContain('x'.repeat(24));

    // A card without OAuth: 409 saying so.
    const plain = await startA2aTestAgent();
    try {
      const res = await request<A2aAgentView>('POST', `${A2A}?project_id=${fx.projectId}`, {
        name: uniqueName('plain'),
        card_url: plain.cardUrl,
        oauth: {},
      });
      expect(res.status, res.text).toBe(200);
      const conflict = await request<unknown>('POST', `${A2A}/${res.body.data.id}/authorize`, {});
      expect(conflict.status).toBe(409);
      expect(JSON.stringify(conflict.body.errorDetails)).toContain(
        'offers no OAuth 2 authorizationCode flow',
      );
    } finally {
      await plain.close();
    }

    const bad = await request<unknown>('POST', `${A2A}?project_id=${fx.projectId}`, {
      name: uniqueName('bad'),
      card_url: remote.cardUrl,
      oauth: { grant: 'password' },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.errorDetails)).toContain('oauth.grant');
    const perUser = await request<unknown>('POST', `${A2A}/${wrong.id}/authorize`, { end_user_id: 'alice' });
    expect(perUser.status).toBe(400);
    expect(JSON.stringify(perUser.body.errorDetails)).toContain('end_user_id');

    const tokens = as.issued.filter((t) => t.length >= 20);
    expect(tokens.length).toBeGreaterThan(0);
    for (const t of tokens) expect(seen.join('\n')).not.toContain(t);
  }, 60_000);
});
