import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRouters } from '../../../api/routes/index.js';
import type { RegisteredRoute } from '../../../api/http/api-router.js';
import { PERMISSIONS, type Permission } from '../../../core/auth/roles.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { createTestToken, createTestUser } from '../../helpers/users.js';

/**
 * Every route of every surface × every role, generated from the routes the
 * server mounts: a route added tomorrow is in this table without anyone
 * writing a line here. A role that may not call a route gets 403 before its
 * input is read; one that may gets anything but 401 or 403 (the made-up ids
 * and empty bodies here are mostly 400 or 404). The expectations are written
 * out per permission, not computed by the code under test.
 */
type Role =
  | 'owner'
  | 'org-admin'
  | 'project-admin'
  | 'developer'
  | 'operator'
  | 'viewer'
  | 'member-elsewhere'
  | 'service-viewer';

const EVERYONE: Role[] = [
  'owner',
  'org-admin',
  'project-admin',
  'developer',
  'operator',
  'viewer',
  'member-elsewhere',
  'service-viewer',
];
const ALLOWED: Record<Exclude<Permission, 'public'>, Role[]> = {
  'signed-in': EVERYONE,
  'org:read': EVERYONE,
  'org:admin': ['owner', 'org-admin'],
  'project:read': [
    'owner',
    'org-admin',
    'project-admin',
    'developer',
    'operator',
    'viewer',
    'service-viewer',
  ],
  'project:operate': ['owner', 'org-admin', 'project-admin', 'developer', 'operator'],
  'project:develop': ['owner', 'org-admin', 'project-admin', 'developer'],
  'project:admin': ['owner', 'org-admin', 'project-admin'],
};

/** The routes open without a credential in users mode: the list, and nothing else. */
const PUBLIC_PATHS = [
  /^\/api\/agent-server\/health(\/ready)?$/,
  /^\/api\/agent-server\/openapi\.json$/,
  /^\/api\/agent-server\/docs(\/assets\/:file)?$/,
  /^\/api\/agent-server\/auth\/(config|login|setup|oidc\/login|oidc\/callback)$/,
  /^\/oauth\/(callback|client-metadata\.json)$/,
  /^\/api\/a2a\/:agent_id\/\.well-known\/agent-card\.json$/,
];
/** The routes behind a credential of their own that no user holds (SCIM_TOKEN). */
const OWN_CREDENTIAL_PATHS = /^\/scim\/v2(\/|$)/;

describe('permission matrix (users mode)', () => {
  let api: TestApi;
  let projectId: string;
  const tokens = new Map<Role, string>();
  let routes: RegisteredRoute[];

  beforeAll(async () => {
    api = await startTestApi({ AUTH_MODE: 'users' });
    const db = api.server.deps.db;
    const owner = await createTestUser(db, { orgRole: 'owner' });
    const created = await api.request<{ id: string }>(
      'POST',
      '/api/agent-server/projects',
      { name: `matrix-${randomUUID().slice(0, 8)}` },
      { authorization: `Bearer ${owner.token}` },
    );
    expect(created.status).toBe(200);
    projectId = created.body.data.id;
    const other = await api.request<{ id: string }>(
      'POST',
      '/api/agent-server/projects',
      { name: `elsewhere-${randomUUID().slice(0, 8)}` },
      { authorization: `Bearer ${owner.token}` },
    );
    tokens.set('owner', owner.token);
    tokens.set('org-admin', (await createTestUser(db, { orgRole: 'admin' })).token);
    for (const role of ['admin', 'developer', 'operator', 'viewer'] as const)
      tokens.set(
        role === 'admin' ? 'project-admin' : role,
        (await createTestUser(db, { projects: { [projectId]: role } })).token,
      );
    tokens.set(
      'member-elsewhere',
      (await createTestUser(db, { projects: { [other.body.data.id]: 'admin' } })).token,
    );
    tokens.set('service-viewer', await createTestToken(db, { projects: { [projectId]: 'viewer' } }));
    routes = buildRouters(api.server.deps).flatMap((r) => r.routes);
  });
  afterAll(async () => {
    await api?.close();
  });

  it('gives every route a known permission, and opens only the public list', () => {
    expect(routes.length).toBeGreaterThan(150);
    for (const route of routes) {
      expect(PERMISSIONS, `${route.method} ${route.fullPath}`).toContain(route.permission);
      const own = OWN_CREDENTIAL_PATHS.test(route.fullPath);
      expect(route.ownCredential === true, `${route.method} ${route.fullPath} own credential?`).toBe(own);
      if (own) continue;
      const listed = PUBLIC_PATHS.some((p) => p.test(route.fullPath));
      expect(route.permission === 'public', `${route.method} ${route.fullPath} public?`).toBe(listed);
    }
  });

  /** The route's path with its parameters filled: the project where it names one, made-up ids elsewhere. */
  const pathOf = (route: RegisteredRoute) =>
    route.fullPath.replace(/:(\w+)/g, (_m, name: string) =>
      name === 'project_id' ? projectId : name === 'name' || name === 'file' ? 'x' : randomUUID(),
    );

  const call = async (route: RegisteredRoute, token: string | undefined) => {
    const url = new URL(api.url + pathOf(route));
    url.searchParams.set('project_id', projectId);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    const withBody = route.method !== 'get' && route.method !== 'delete';
    if (withBody) headers['content-type'] = 'application/json';
    const res = await fetch(url, {
      method: route.method.toUpperCase(),
      headers,
      body: withBody ? JSON.stringify({ project_id: projectId }) : undefined,
      signal: AbortSignal.timeout(10_000),
    });
    await res.body?.cancel();
    return res.status;
  };

  it('answers 401 on every non-public route without a credential or with a bad one', async () => {
    for (const route of routes.filter((r) => r.permission !== 'public' || r.ownCredential)) {
      expect(await call(route, undefined), `${route.method} ${route.fullPath}`).toBe(401);
      expect(await call(route, 'ags_pat_not-a-token'), `${route.method} ${route.fullPath}`).toBe(401);
    }
  });

  /** The path names a resource other than the project (`:id`, `:run_id`…), whose project decides. */
  const namesResource = (route: RegisteredRoute) =>
    /:(?!project_id\b)\w+/.test(route.fullPath) && !route.fullPath.includes(':project_id');

  it('allows each role exactly what its permission gives, on every route', async () => {
    const wrong: string[] = [];
    for (const route of routes.filter((r) => r.permission !== 'public' || r.ownCredential)) {
      if (route.ownCredential) {
        // No user's credential opens it, whatever the role.
        for (const role of EVERYONE) {
          const status = await call(route, tokens.get(role));
          if (status !== 401)
            wrong.push(`${role} ${route.method.toUpperCase()} ${route.fullPath} (own credential): ${status}`);
        }
        continue;
      }
      const allowed = ALLOWED[route.permission as Exclude<Permission, 'public'>];
      for (const role of EVERYONE) {
        const status = await call(route, tokens.get(role));
        const ok = allowed.includes(role)
          ? status !== 403 && status !== 401
          : role === 'member-elsewhere' && namesResource(route)
            ? // Its project is the resource's, and these made-up ids name none: 400 or 404, never a 2xx
              // (the test below takes real resources of another project).
              status === 400 || status === 403 || status === 404
            : status === 403;
        if (!ok)
          wrong.push(
            `${role} ${route.method.toUpperCase()} ${route.fullPath} (${route.permission}): ${status}`,
          );
      }
    }
    expect(wrong).toEqual([]);
  });

  it('refuses a resource of a project the caller holds no role in, before reading the body', async () => {
    const owner = { authorization: `Bearer ${tokens.get('owner')}` };
    const made = await api.request<{ id: string }>(
      'POST',
      `/api/agent-server/schemas?project_id=${projectId}`,
      { name: 'isolated', schema: { type: 'object' } },
      owner,
    );
    expect(made.status).toBe(200);
    const path = `/api/agent-server/schemas/${made.body.data.id}`;
    const as = (role: Role) => ({ authorization: `Bearer ${tokens.get(role)}` });
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { description: 'changed' }],
      ['PATCH', { not_a_field: true }],
      ['DELETE', undefined],
    ] as const) {
      const refused = await api.request(method, path, body, as('member-elsewhere'));
      expect(refused.status, `${method} ${JSON.stringify(body)}`).toBe(403);
      expect(String(refused.body.errorDetails.permission)).toMatch(/^project:/);
    }
    expect((await api.request('GET', path, undefined, as('viewer'))).status).toBe(200);
    expect((await api.request('PATCH', path, { description: 'x' }, as('viewer'))).status).toBe(403);
    expect((await api.request('PATCH', path, { description: 'x' }, as('developer'))).status).toBe(200);
    // A list naming the other project, and one naming none (a member must name a project).
    expect(
      (
        await api.request(
          'GET',
          `/api/agent-server/schemas?project_id=${projectId}`,
          undefined,
          as('member-elsewhere'),
        )
      ).status,
    ).toBe(403);
    expect((await api.request('GET', '/api/agent-server/traces', undefined, as('developer'))).status).toBe(
      403,
    );
    expect((await api.request('GET', '/api/agent-server/traces', undefined, as('org-admin'))).status).toBe(
      200,
    );
  });
});
