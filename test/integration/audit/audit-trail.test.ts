/**
 * The audit trail of the API in users mode: a change that succeeds is a row
 * naming who made it, from where, and the fields before and after; a change
 * refused is a `.denied` row; every request made with the break-glass
 * ADMIN_TOKEN is a row, reads included. The sweeps are generated from the
 * routes the server mounts, so a route added tomorrow is covered (or fails
 * here) without anyone writing a line.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RegisteredRoute } from '../../../api/http/api-router.js';
import { buildRouters } from '../../../api/routes/index.js';
import type { AuditEvent } from '../../../core/audit/audit-events.js';
import type { Db } from '../../../core/db/knex.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { createProvider, PROVIDERS } from '../../helpers/factories/config.js';
import { createSchema, SCHEMAS } from '../../helpers/factories/content.js';
import { createTestUser, type TestUser } from '../../helpers/users.js';

const ADMIN_TOKEN = `break-glass-${randomUUID()}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The routes that change something: any method but GET, unless a read permission says it reads (a search). */
const READS = ['public', 'org:read', 'project:read'];
/**
 * A row's status is the answer's, or for a failure the error's own: a door may answer that in its
 * own shape (the Agent Protocol's 422 for a validation error).
 */
const sameOutcome = (recorded: number | null, answered: number) =>
  recorded === answered || (recorded !== null && recorded >= 400 && answered >= 400);
const isChange = (r: RegisteredRoute) =>
  r.method !== 'get' && !READS.includes(r.permission) && r.audit !== false;

describe('the audit trail (users mode)', () => {
  let api: TestApi;
  let db: Db;
  let owner: TestUser;
  let projectId: string;
  let routes: RegisteredRoute[];
  /** The API as the owner's token: the factories write through it. */
  let asOwner: TestApi;

  const rowsWhere = (where: Record<string, unknown>) =>
    db('audit_events').where(where).orderBy('at', 'desc').select<AuditEvent[]>('*');

  beforeAll(async () => {
    api = await startTestApi({ AUTH_MODE: 'users', ADMIN_TOKEN });
    db = api.server.deps.db;
    owner = await createTestUser(db, { orgRole: 'owner' });
    asOwner = {
      ...api,
      request: (method, path, body, headers = {}) =>
        api.request(method, path, body, { ...bearer(owner.token), ...headers }),
    };
    const project = await asOwner.request<{ id: string }>('POST', '/api/agent-server/projects', {
      name: `audit-${randomUUID().slice(0, 8)}`,
    });
    projectId = project.body.data.id;
    routes = buildRouters(api.server.deps).flatMap((r) => r.routes);
  });
  afterAll(async () => {
    await api?.close();
  });

  it('records a change to an organisation resource with who, from where, and the fields before and after', async () => {
    const provider = await createProvider(asOwner, { base_url: 'http://127.0.0.1:9/v1' });
    const patched = await asOwner.request(
      'PATCH',
      `${PROVIDERS}/${provider.id}`,
      { base_url: 'http://127.0.0.1:10/v1' },
      { 'user-agent': 'audit-test/1' },
    );
    expect(patched.status).toBe(200);
    expect(await asOwner.request('DELETE', `${PROVIDERS}/${provider.id}`)).toMatchObject({ status: 200 });
    const rows = await rowsWhere({ resource_id: provider.id });
    expect(rows.map((r) => r.action)).toEqual(['provider.delete', 'provider.update', 'provider.create']);
    const [deleted, updated, created] = rows as [AuditEvent, AuditEvent, AuditEvent];
    expect(updated).toMatchObject({
      actor_type: 'api_token',
      actor_id: owner.id,
      actor_name: owner.userName,
      resource_type: 'provider',
      method: 'PATCH',
      path: '/api/agent-server/providers/:id',
      status: 200,
      ip: expect.stringMatching(/127\.0\.0\.1/) as string,
      user_agent: 'audit-test/1',
      details: { path: `${PROVIDERS}/${provider.id}`, token_id: expect.any(String) as string },
    });
    expect(updated.before).toMatchObject({ id: provider.id, base_url: 'http://127.0.0.1:9/v1' });
    expect(updated.after).toMatchObject({ id: provider.id, base_url: 'http://127.0.0.1:10/v1' });
    expect(created.after).toMatchObject({ id: provider.id, name: provider.name });
    expect(created.before).toBeNull();
    expect(deleted.before).toMatchObject({ base_url: 'http://127.0.0.1:10/v1' });
  });

  it('records a project resource with its project, and a refused change as denied', async () => {
    const schema = await createSchema(asOwner, projectId);
    const viewer = await createTestUser(db, { projects: { [projectId]: 'viewer' } });
    const refused = await api.request(
      'PATCH',
      `${SCHEMAS}/${schema.id}`,
      { name: 'renamed' },
      bearer(viewer.token),
    );
    expect(refused.status).toBe(403);
    const renamed = await asOwner.request('PATCH', `${SCHEMAS}/${schema.id}`, { name: 'renamed' });
    expect(renamed.status).toBe(200);
    const rows = await rowsWhere({ resource_id: schema.id });
    expect(rows.map((r) => [r.action, r.actor_id, r.status])).toEqual([
      ['schema.update', owner.id, 200],
      ['schema.update.denied', viewer.id, 403],
      ['schema.create', owner.id, 200],
    ]);
    expect(rows.every((r) => r.project_id === projectId)).toBe(true);
    expect(rows[0]!.before).toMatchObject({ name: schema.name });
    expect(rows[0]!.after).toMatchObject({ name: 'renamed' });
    expect(rows[1]!.before).toBeNull();
  });

  it('does not record reads, nor a change that failed, made with an ordinary credential', async () => {
    const before = (await rowsWhere({ actor_id: owner.id })).length;
    expect((await asOwner.request('GET', PROVIDERS)).status).toBe(200);
    expect((await asOwner.request('PATCH', `${PROVIDERS}/${randomUUID()}`, { name: 'x' })).status).toBe(404);
    expect(await rowsWhere({ actor_id: owner.id })).toHaveLength(before);
  });

  /** The route's path with its parameters filled: the project where it names one, made-up ids elsewhere. */
  const pathOf = (route: RegisteredRoute) =>
    route.fullPath.replace(/:(\w+)/g, (_m, name: string) =>
      name === 'project_id'
        ? projectId
        : name === 'name' || name === 'file'
          ? `n-${randomUUID()}`
          : randomUUID(),
    );
  const call = async (route: RegisteredRoute, token: string) => {
    const path = pathOf(route);
    const url = new URL(api.url + path);
    url.searchParams.set('project_id', projectId);
    const withBody = route.method !== 'get' && route.method !== 'delete';
    const res = await fetch(url, {
      method: route.method.toUpperCase(),
      headers: {
        ...bearer(token),
        accept: 'application/json',
        ...(withBody ? { 'content-type': 'application/json' } : {}),
      },
      body: withBody ? JSON.stringify({ project_id: projectId }) : undefined,
      signal: AbortSignal.timeout(10_000),
    });
    await res.body?.cancel();
    return { path, status: res.status };
  };

  /**
   * The rows of one request: the trail's, or the handler's own event. A handler that answers on the raw response (the MCP SDK) may finish
   * it a moment before it returns and the row is written: wait for it a little.
   */
  const rowsOf = async (who: Record<string, string>, route: RegisteredRoute, path: string) => {
    for (let attempt = 0; ; attempt++) {
      // The trail's row names the route's template; a handler's own event, the path requested.
      const rows = await db('audit_events')
        .where({ ...who, method: route.method.toUpperCase() })
        .where((w) =>
          w
            .where({ path })
            .orWhere((trail) =>
              trail.where({ path: route.fullPath }).whereRaw(`details->>'path' = ?`, [path]),
            ),
        )
        .select<AuditEvent[]>('*');
      if (rows.length > 0 || attempt === 40) return rows;
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('records a denied row for every change route refused, on every surface', async () => {
    const changes = routes.filter(isChange);
    expect(changes.length).toBeGreaterThan(80);
    for (const surface of ['/api/agent-server/', '/api/langgraph/', '/api/mcp/', '/api/a2a/'])
      expect(
        changes.some((r) => r.fullPath.startsWith(surface)),
        surface,
      ).toBe(true);
    // A member holding no role anywhere: every project and organisation permission is refused.
    const nobody = await createTestUser(db);
    const missing: string[] = [];
    for (const route of changes.filter((r) => r.permission !== 'signed-in')) {
      const { path, status } = await call(route, nobody.token);
      expect(status, `${route.method} ${route.fullPath}`).toBe(403);
      const [row] = await rowsOf({ actor_id: nobody.id }, route, path);
      if (!row?.action.endsWith('.denied') || row.status !== 403)
        missing.push(`${route.method} ${route.fullPath}`);
    }
    expect(missing).toEqual([]);
  });

  it('records every request made with ADMIN_TOKEN, reads and failures included, on every route', async () => {
    const missing: string[] = [];
    const actions = new Map<string, string>();
    for (const route of routes.filter((r) => r.permission !== 'public' && r.audit !== false)) {
      const { path, status } = await call(route, ADMIN_TOKEN);
      const rows = await rowsOf({ actor_type: 'admin_token' }, route, path);
      if (rows.length !== 1 || !sameOutcome(rows[0]!.status, status))
        missing.push(`${route.method} ${route.fullPath}: ${status}`);
      else actions.set(`${route.method} ${route.fullPath}`, rows[0]!.action.replace(/\.failed$/, ''));
    }
    expect(missing).toEqual([]);
    // The names, as docs/audit-log.md explains them.
    expect(Object.fromEntries([...actions].filter(([k]) => EXPECTED_ACTIONS[k] !== undefined))).toEqual(
      EXPECTED_ACTIONS,
    );
    // No two change routes share a name (reads may: a list and a get are both `.read`, told apart by path).
    const byName = new Map<string, string[]>();
    for (const [route, action] of actions)
      if (!route.startsWith('get ')) byName.set(action, [...(byName.get(action) ?? []), route]);
    expect([...byName.values()].filter((r) => r.length > 1)).toEqual([]);
  });
});

const EXPECTED_ACTIONS: Record<string, string> = {
  'post /api/agent-server/projects': 'project.create',
  'patch /api/agent-server/agents/:id': 'agent.update',
  'delete /api/agent-server/agents/:id': 'agent.delete',
  'get /api/agent-server/agents/:id': 'agent.read',
  'post /api/agent-server/virtual-keys/:id/rotate': 'virtual_key.rotate',
  'post /api/agent-server/prompts/:name/versions': 'prompt.version.create',
  'put /api/agent-server/agents/:id/skills/:name': 'agent.skill.update',
  'post /api/agent-server/runs/:run_id/decision': 'run.decision',
  'post /api/agent-server/converse': 'converse',
  'post /api/agent-server/evals': 'eval.create',
  'post /api/agent-server/crons/:id/pause': 'cron.pause',
  'post /api/langgraph/:project_id/threads/:thread_id/runs/stream': 'langgraph.thread.run.stream',
  'post /api/langgraph/:project_id/assistants/search': 'langgraph.assistant.search',
  'post /api/a2a/:agent_id': 'a2a.call',
  'post /api/mcp/:project_id': 'mcp.call',
  'delete /api/mcp/:project_id': 'mcp.delete',
};
