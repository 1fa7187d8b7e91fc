/**
 * Managing users in users mode: organisation admins create, change and remove
 * them; only owners touch the owner role; the last active owner stays; a
 * project's admins give roles in it, and a member sees only their projects; a
 * deactivated user's session and tokens stop on the next request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestToken, createTestUser, type TestUser } from '../../helpers/users.js';
import { bearer, Browser, startUsersModeApi, type UsersModeApi } from './users-mode.js';

const PASSWORD = 'a long enough password';

interface User {
  id: string;
  user_name: string;
  org_role: string;
  active: boolean;
  has_password: boolean;
}

describe('users mode: users and project members', () => {
  let env: UsersModeApi;
  let owner: TestUser;
  const asOwner = () => bearer(owner.token);

  const createUser = async (body: Record<string, unknown>, as = asOwner()) =>
    env.api.request<User>('POST', '/api/agent-server/users', body, as);

  beforeAll(async () => {
    env = await startUsersModeApi('auth_users');
    owner = await createTestUser(env.db, { orgRole: 'owner', userName: 'olivia' });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('creates, lists, finds and changes users; the password hash never shows, nor in the audit log', async () => {
    const made = await createUser({ user_name: 'Bob@example.test', display_name: 'Bob', password: PASSWORD });
    expect(made.status).toBe(200);
    expect(made.body.data).toMatchObject({ user_name: 'Bob@example.test', org_role: 'member', active: true });
    expect(made.body.data.has_password).toBe(true);
    expect(made.text).not.toContain('argon2');

    const duplicate = await createUser({ user_name: 'bob@EXAMPLE.test' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.errorDetails.field).toBe('user_name');
    const short = await createUser({ user_name: 'carol', password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body.errorDetails.fields?.[0]?.field).toBe('password');

    await createUser({ user_name: 'carol', email: 'carol@example.test' });
    const found = await env.api.request<User[]>(
      'GET',
      '/api/agent-server/users?user_name=BOB',
      undefined,
      asOwner(),
    );
    expect(found.body.data.map((u) => u.user_name)).toEqual(['Bob@example.test']);

    const changed = await env.api.request<User & { display_name: string }>(
      'PATCH',
      `/api/agent-server/users/${made.body.data.id}`,
      { display_name: 'Robert', password: 'another long password' },
      asOwner(),
    );
    expect(changed.status).toBe(200);
    expect(changed.body.data.display_name).toBe('Robert');
    const got = await env.api.request<User>(
      'GET',
      `/api/agent-server/users/${made.body.data.id}`,
      undefined,
      asOwner(),
    );
    expect(got.body.data).toMatchObject({ display_name: 'Robert', has_password: true });

    const audit = await env
      .db('audit_events')
      .where({ action: 'user.update', resource_id: made.body.data.id })
      .first<{ actor_name: string; before: { display_name: string }; after: { display_name: string } }>();
    expect(audit).toMatchObject({
      actor_name: 'olivia',
      before: { display_name: 'Bob' },
      after: { display_name: 'Robert' },
    });
    const rows = JSON.stringify(await env.db('audit_events').select('*'));
    expect(rows).not.toContain('argon2');
    expect(rows).not.toContain('another long password');

    const inactive = await env.api.request<User[]>(
      'GET',
      '/api/agent-server/users?active=false',
      undefined,
      asOwner(),
    );
    expect(inactive.body.data).toEqual([]);
  });

  it('lets only an owner grant, remove or change the owner role; members manage no users', async () => {
    const admin = await createTestUser(env.db, { orgRole: 'admin' });
    const member = await createTestUser(env.db);
    expect((await createUser({ user_name: 'eve', org_role: 'owner' }, bearer(admin.token))).status).toBe(403);
    expect(
      (
        await env.api.request(
          'PATCH',
          `/api/agent-server/users/${owner.id}`,
          { display_name: 'x' },
          bearer(admin.token),
        )
      ).status,
    ).toBe(403);
    expect(
      (await env.api.request('DELETE', `/api/agent-server/users/${owner.id}`, undefined, bearer(admin.token)))
        .status,
    ).toBe(403);
    const byAdmin = await createUser({ user_name: 'dave', org_role: 'admin' }, bearer(admin.token));
    expect(byAdmin.status).toBe(200);
    expect(
      (await env.api.request('GET', '/api/agent-server/users', undefined, bearer(member.token))).status,
    ).toBe(403);
    expect((await createUser({ user_name: 'frank' }, bearer(member.token))).status).toBe(403);
  });

  it('never demotes, deactivates or deletes the last active owner', async () => {
    const path = `/api/agent-server/users/${owner.id}`;
    expect((await env.api.request('PATCH', path, { org_role: 'admin' }, asOwner())).status).toBe(409);
    expect((await env.api.request('PATCH', path, { active: false }, asOwner())).status).toBe(409);
    expect((await env.api.request('DELETE', path, undefined, asOwner())).status).toBe(409);

    const second = await createUser({ user_name: 'grace', org_role: 'owner' });
    expect(second.status).toBe(200);
    const secondPath = `/api/agent-server/users/${second.body.data.id}`;
    // With two owners, one may go; then the other is the last again.
    expect((await env.api.request('PATCH', secondPath, { org_role: 'admin' }, asOwner())).status).toBe(200);
    expect((await env.api.request('PATCH', path, { org_role: 'admin' }, asOwner())).status).toBe(409);
    expect((await env.api.request('DELETE', secondPath, undefined, asOwner())).status).toBe(200);
    expect((await env.api.request('GET', secondPath, undefined, asOwner())).status).toBe(404);
    expect(
      await env.db('audit_events').where({ action: 'user.delete', resource_id: second.body.data.id }).first(),
    ).toBeDefined();
  });

  it("gives project roles: a member sees only their projects, and a project's admin manages its members", async () => {
    const project = async (name: string) =>
      (await env.api.request<{ id: string }>('POST', '/api/agent-server/projects', { name }, asOwner())).body
        .data.id;
    const a = await project('members-a');
    const b = await project('members-b');
    const member = await createTestUser(env.db, { userName: 'henry' });
    const lead = await createTestUser(env.db, { userName: 'iris', projects: { [a]: 'admin' } });

    const listed = async (token: string) =>
      (
        await env.api.request<Array<{ id: string }>>(
          'GET',
          '/api/agent-server/projects',
          undefined,
          bearer(token),
        )
      ).body.data.map((p) => p.id);
    expect(await listed(member.token)).toEqual([]);

    const put = await env.api.request<{ role: string; user_name: string }>(
      'PUT',
      `/api/agent-server/projects/${a}/members/${member.id}`,
      { role: 'viewer' },
      bearer(lead.token),
    );
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ user_name: 'henry', role: 'viewer' });
    expect(await listed(member.token)).toEqual([a]);
    expect(
      (await env.api.request('GET', `/api/agent-server/projects/${b}`, undefined, bearer(member.token)))
        .status,
    ).toBe(403);

    const members = await env.api.request<Array<{ user_name: string; role: string }>>(
      'GET',
      `/api/agent-server/projects/${a}/members`,
      undefined,
      bearer(member.token),
    );
    expect(members.body.data.map((m) => [m.user_name, m.role])).toEqual([
      ['henry', 'viewer'],
      ['iris', 'admin'],
    ]);
    // A viewer changes nobody's role; the project's admin cannot reach another project.
    expect(
      (
        await env.api.request(
          'PUT',
          `/api/agent-server/projects/${a}/members/${member.id}`,
          { role: 'admin' },
          bearer(member.token),
        )
      ).status,
    ).toBe(403);
    expect(
      (
        await env.api.request(
          'PUT',
          `/api/agent-server/projects/${b}/members/${member.id}`,
          { role: 'admin' },
          bearer(lead.token),
        )
      ).status,
    ).toBe(403);
    expect(
      (
        await env.api.request(
          'PUT',
          `/api/agent-server/projects/${a}/members/${member.id}`,
          { role: 'owner' },
          bearer(lead.token),
        )
      ).status,
    ).toBe(400);

    await env.api.request(
      'PUT',
      `/api/agent-server/projects/${a}/members/${member.id}`,
      { role: 'developer' },
      bearer(lead.token),
    );
    const audit = await env
      .db('audit_events')
      .where({ action: 'project_member.put', project_id: a })
      .orderBy('at', 'desc')
      .first<{ before: { role: string }; after: { role: string }; actor_name: string }>();
    expect(audit).toMatchObject({
      before: { role: 'viewer' },
      after: { role: 'developer' },
      actor_name: 'iris',
    });

    const removed = await env.api.request(
      'DELETE',
      `/api/agent-server/projects/${a}/members/${member.id}`,
      undefined,
      bearer(lead.token),
    );
    expect(removed.status).toBe(200);
    expect(await listed(member.token)).toEqual([]);
    expect(
      (
        await env.api.request(
          'DELETE',
          `/api/agent-server/projects/${a}/members/${member.id}`,
          undefined,
          bearer(lead.token),
        )
      ).status,
    ).toBe(404);
  });

  it("refuses a deactivated user's session and tokens on the next request, and their password", async () => {
    const made = await createUser({ user_name: 'jack', password: PASSWORD });
    const id = made.body.data.id;
    const token = await createTestToken(env.db, { userId: id });
    const browser = new Browser(env.api);
    expect(
      (
        await browser.request('POST', '/api/agent-server/auth/login', {
          user_name: 'jack',
          password: PASSWORD,
        })
      ).status,
    ).toBe(200);
    expect((await browser.request('GET', '/api/agent-server/auth/session')).status).toBe(200);
    expect(
      (await env.api.request('GET', '/api/agent-server/auth/session', undefined, bearer(token))).status,
    ).toBe(200);

    expect(
      (await env.api.request('PATCH', `/api/agent-server/users/${id}`, { active: false }, asOwner())).status,
    ).toBe(200);
    expect((await browser.request('GET', '/api/agent-server/auth/session')).status).toBe(401);
    expect(
      (await env.api.request('GET', '/api/agent-server/auth/session', undefined, bearer(token))).status,
    ).toBe(401);
    expect(await env.db('user_sessions').where({ user_id: id }).first()).toBeUndefined();
    const login = await env.api.request('POST', '/api/agent-server/auth/login', {
      user_name: 'jack',
      password: PASSWORD,
    });
    expect(login.status).toBe(401);

    expect(
      (await env.api.request('PATCH', `/api/agent-server/users/${id}`, { active: true }, asOwner())).status,
    ).toBe(200);
    expect(
      (await env.api.request('GET', '/api/agent-server/auth/session', undefined, bearer(token))).status,
    ).toBe(200);
  });
});
