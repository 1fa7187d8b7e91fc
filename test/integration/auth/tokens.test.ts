/**
 * API tokens in users mode: anyone signed in issues personal tokens (never
 * wider than themselves), organisation admins issue service tokens; the
 * secret is shown once, and revoked or expired tokens get 401.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestToken, createTestUser, type TestUser } from '../../helpers/users.js';
import { bearer, startUsersModeApi, type UsersModeApi } from './users-mode.js';

interface Token {
  id: string;
  name: string;
  kind: string;
  token_prefix: string;
  revoked_at: string | null;
  expires_at: string | null;
  last_used_at: string | null;
  token?: string;
}

describe('users mode: API tokens', () => {
  let env: UsersModeApi;
  let owner: TestUser;
  let member: TestUser;
  let projectA: string;
  let projectB: string;

  const issue = (body: Record<string, unknown>, as: TestUser) =>
    env.api.request<Token>('POST', '/api/agent-server/tokens', body, bearer(as.token));
  const sessionWith = (token: string) =>
    env.api.request<{ user: { user_name: string } | null; principal: { kind: string } }>(
      'GET',
      '/api/agent-server/auth/session',
      undefined,
      bearer(token),
    );
  const projectsSeenWith = async (token: string) =>
    (
      await env.api.request<Array<{ id: string }>>(
        'GET',
        '/api/agent-server/projects',
        undefined,
        bearer(token),
      )
    ).body.data.map((p) => p.id);

  beforeAll(async () => {
    env = await startUsersModeApi('auth_tokens');
    owner = await createTestUser(env.db, { orgRole: 'owner', userName: 'owner' });
    const project = async (name: string) =>
      (
        await env.api.request<{ id: string }>(
          'POST',
          '/api/agent-server/projects',
          { name },
          bearer(owner.token),
        )
      ).body.data.id;
    projectA = await project('tokens-a');
    projectB = await project('tokens-b');
    member = await createTestUser(env.db, { userName: 'mia', projects: { [projectA]: 'developer' } });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('issues a personal token whose secret is shown once, works as its user, and is listed without it', async () => {
    const res = await issue({ name: 'ci', kind: 'personal', expires_in_days: 30 }, member);
    expect(res.status).toBe(200);
    const secret = res.body.data.token!;
    expect(secret).toMatch(/^ags_pat_/);
    expect(res.body.data.token_prefix).toBe(secret.slice(0, 16));
    expect(res.text).not.toContain('token_hash');
    expect(Date.parse(res.body.data.expires_at!) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const session = await sessionWith(secret);
    expect(session.status).toBe(200);
    expect(session.body.data.user?.user_name).toBe('mia');
    expect(await projectsSeenWith(secret)).toEqual([projectA]);

    const listed = await env.api.request<Token[]>(
      'GET',
      '/api/agent-server/tokens',
      undefined,
      bearer(member.token),
    );
    const ci = listed.body.data.find((t) => t.name === 'ci')!;
    expect(ci).toMatchObject({ kind: 'personal', token_prefix: secret.slice(0, 16), revoked_at: null });
    expect(ci.last_used_at).not.toBeNull();
    expect(listed.text).not.toContain(secret);
    expect(listed.text).not.toContain('token_hash');

    const audit = await env
      .db('audit_events')
      .where({ action: 'token.create', resource_id: ci.id })
      .first<Record<string, unknown> | undefined>('*');
    expect(audit).toMatchObject({ actor_name: 'mia' });
    expect(JSON.stringify(await env.db('audit_events').select('*'))).not.toContain(secret);
  });

  it("keeps a personal token within its user's roles, and narrows it when asked", async () => {
    const wider = await issue({ name: 'x', project_roles: { [projectA]: 'admin' } }, member);
    expect(wider.status).toBe(400);
    expect(wider.body.errorDetails.fields?.[0]?.field).toBe(`project_roles.${projectA}`);
    const elsewhere = await issue({ name: 'x', project_roles: { [projectB]: 'viewer' } }, member);
    expect(elsewhere.status).toBe(400);
    const org = await issue({ name: 'x', org_role: 'admin' }, member);
    expect(org.status).toBe(400);
    expect(org.body.errorDetails.fields?.[0]?.field).toBe('org_role');
    const past = await issue({ name: 'x', expires_at: '2020-01-01T00:00:00Z' }, member);
    expect(past.status).toBe(400);

    const narrow = await issue({ name: 'read only', project_roles: { [projectA]: 'viewer' } }, member);
    expect(narrow.status).toBe(200);
    const readOnly = bearer(narrow.body.data.token!);
    expect(
      (await env.api.request('GET', `/api/agent-server/projects/${projectA}`, undefined, readOnly)).status,
    ).toBe(200);
    const change = await env.api.request(
      'POST',
      `/api/agent-server/schemas?project_id=${projectA}`,
      { name: 'nope', schema: { type: 'object' } },
      readOnly,
    );
    expect(change.status).toBe(403);
  });

  it('issues service tokens to organisation admins only, with exactly the roles given', async () => {
    const refused = await issue({ name: 'bot', kind: 'service' }, member);
    expect(refused.status).toBe(403);
    const res = await issue({ name: 'bot', kind: 'service', project_roles: { [projectB]: 'viewer' } }, owner);
    expect(res.status).toBe(200);
    const secret = res.body.data.token!;
    expect(secret).toMatch(/^ags_svc_/);
    const session = await sessionWith(secret);
    expect(session.body.data).toMatchObject({ user: null, principal: { kind: 'service' } });
    expect(await projectsSeenWith(secret)).toEqual([projectB]);

    const ownerList = await env.api.request<Token[]>(
      'GET',
      '/api/agent-server/tokens',
      undefined,
      bearer(owner.token),
    );
    expect(ownerList.body.data.map((t) => t.name)).toContain('bot');
    expect(ownerList.body.data.map((t) => t.name)).not.toContain('ci');
    const memberList = await env.api.request<Token[]>(
      'GET',
      '/api/agent-server/tokens',
      undefined,
      bearer(member.token),
    );
    expect(memberList.body.data.map((t) => t.name)).not.toContain('bot');
    // Not theirs to revoke, nor to know of.
    expect(
      (
        await env.api.request(
          'DELETE',
          `/api/agent-server/tokens/${res.body.data.id}`,
          undefined,
          bearer(member.token),
        )
      ).status,
    ).toBe(404);
  });

  it('refuses a revoked token and an expired one with 401', async () => {
    const made = await issue({ name: 'short-lived' }, member);
    const secret = made.body.data.token!;
    expect((await sessionWith(secret)).status).toBe(200);
    const revoked = await env.api.request<Token>(
      'DELETE',
      `/api/agent-server/tokens/${made.body.data.id}`,
      undefined,
      bearer(member.token),
    );
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.revoked_at).not.toBeNull();
    expect((await sessionWith(secret)).status).toBe(401);
    const audit = await env
      .db('audit_events')
      .where({ action: 'token.revoke', resource_id: made.body.data.id })
      .first<Record<string, unknown> | undefined>('*');
    expect(audit).toMatchObject({ actor_name: 'mia' });

    // An organisation admin revokes anyone's.
    const other = await issue({ name: 'other' }, member);
    expect(
      (
        await env.api.request(
          'DELETE',
          `/api/agent-server/tokens/${other.body.data.id}`,
          undefined,
          bearer(owner.token),
        )
      ).status,
    ).toBe(200);
    expect((await sessionWith(other.body.data.token!)).status).toBe(401);

    const expired = await createTestToken(env.db, {
      userId: member.id,
      expiresAt: new Date(Date.now() - 1000),
    });
    expect((await sessionWith(expired)).status).toBe(401);
  });
});
