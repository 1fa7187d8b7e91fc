/**
 * Reading the audit log: filters, the time window, pages, the JSON lines
 * export, who may read it (an organisation admin everything, a project admin
 * its project's rows), and retention.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneAuditEvents, type AuditEvent } from '../../../core/audit/audit-events.js';
import { recordAudit } from '../../../core/audit/audit-log.js';
import type { Db } from '../../../core/db/knex.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { createTestUser, type TestUser } from '../../helpers/users.js';

const EVENTS = '/api/agent-server/audit-events';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('the audit log API', () => {
  let api: TestApi;
  let db: Db;
  let owner: TestUser;
  let projectA: string;
  let projectB: string;
  /** Unique to this run, so rows other tests write never match. */
  const kind = `thing_${randomUUID().slice(0, 8)}`;
  const hourAgo = (h: number) => new Date(Date.now() - h * 3_600_000);

  const list = async (query: string, token = owner.token) => {
    const res = await api.request<AuditEvent[]>(
      'GET',
      `${EVENTS}?resource_type=${kind}&${query}`,
      undefined,
      bearer(token),
    );
    return res;
  };

  beforeAll(async () => {
    api = await startTestApi({ AUTH_MODE: 'users' });
    db = api.server.deps.db;
    owner = await createTestUser(db, { orgRole: 'owner' });
    const project = async () => {
      const res = await api.request<{ id: string }>(
        'POST',
        '/api/agent-server/projects',
        { name: `audit-${randomUUID().slice(0, 8)}` },
        bearer(owner.token),
      );
      return res.body.data.id;
    };
    projectA = await project();
    projectB = await project();
    const actor = { kind: 'system' as const, name: 'test' };
    // Six rows an hour apart, newest first: 0 h (A, create), 1 h (B, update), 2 h (A, update), …
    for (let i = 0; i < 6; i++) {
      await recordAudit(db, {
        actor:
          i % 3 === 0
            ? actor
            : {
                kind: 'user',
                via: 'token',
                name: owner.userName,
                userId: owner.id,
                orgRole: 'owner',
                projects: new Map(),
              },
        action: i === 0 ? `${kind}.create` : `${kind}.update`,
        resourceType: kind,
        resourceId: `r${i}`,
        projectId: i % 2 === 0 ? projectA : projectB,
      });
      await db('audit_events')
        .where({ resource_type: kind, resource_id: `r${i}` })
        .update({ at: hourAgo(i) });
    }
  });
  afterAll(async () => {
    await api?.close();
  });

  const ids = (res: { body: { data: AuditEvent[] } }) => res.body.data.map((e) => e.resource_id);

  it('lists newest first, filtered by action (exact or prefix), actor, resource and project', async () => {
    expect(ids(await list(''))).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
    expect(ids(await list(`action=${kind}.create`))).toEqual(['r0']);
    expect(ids(await list(`action=${kind}.*`))).toHaveLength(6);
    expect(ids(await list(`action=${kind}.up*`))).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(ids(await list(`action=${kind}.up`))).toEqual([]);
    expect(ids(await list(`actor_id=${owner.id}`))).toEqual(['r1', 'r2', 'r4', 'r5']);
    expect(ids(await list('actor_type=system'))).toEqual(['r0', 'r3']);
    expect(ids(await list('resource_id=r3'))).toEqual(['r3']);
    expect(ids(await list(`project_id=${projectB}`))).toEqual(['r1', 'r3', 'r5']);
    const row = (await list('resource_id=r1')).body.data[0]!;
    expect(row).toMatchObject({
      actor_type: 'api_token',
      actor_id: owner.id,
      actor_name: owner.userName,
      project_id: projectB,
    });
  });

  it('narrows to a time window (start inclusive, end exclusive) and pages with limit and offset', async () => {
    const window = `start_time=${hourAgo(4.5).toISOString()}&end_time=${hourAgo(0.5).toISOString()}`;
    expect(ids(await list(window))).toEqual(['r1', 'r2', 'r3', 'r4']);
    expect(ids(await list(`${window}&limit=2`))).toEqual(['r1', 'r2']);
    expect(ids(await list(`${window}&limit=2&offset=2`))).toEqual(['r3', 'r4']);
    expect(ids(await list('limit=2&offset=5'))).toEqual(['r5']);
    const bad = await list('limit=0&action=Agents!');
    expect(bad.status).toBe(400);
    expect(bad.body.errorDetails.fields?.map((f) => f.field).sort()).toEqual(['action', 'limit']);
  });

  it('exports every matching row as JSON lines, newest first', async () => {
    const res = await fetch(`${api.url}${EVENTS}/export?resource_type=${kind}&action=${kind}.update`, {
      headers: bearer(owner.token),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const text = await res.text();
    expect(text.endsWith('\n')).toBe(true);
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditEvent);
    expect(lines.map((e) => e.resource_id)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(lines[0]).toMatchObject({ action: `${kind}.update`, project_id: projectB });
  });

  it('exports more rows than one page holds, each once', async () => {
    const many = `bulk_${randomUUID().slice(0, 8)}`;
    const at = new Date();
    // Rows with one timestamp: the pages' order must not depend on time alone.
    await db('audit_events').insert(
      Array.from({ length: 1_203 }, (_, i) => ({
        actor_type: 'system',
        action: `${many}.x`,
        resource_type: many,
        resource_id: String(i),
        at,
      })),
    );
    const res = await fetch(`${api.url}${EVENTS}/export?resource_type=${many}`, {
      headers: bearer(owner.token),
    });
    const lines = (await res.text()).trimEnd().split('\n');
    expect(lines).toHaveLength(1_203);
    expect(new Set(lines.map((l) => (JSON.parse(l) as AuditEvent).resource_id)).size).toBe(1_203);
  });

  it('shows a project admin the rows of its project only, and nothing to a developer', async () => {
    const admin = await createTestUser(db, { projects: { [projectA]: 'admin', [projectB]: 'developer' } });
    expect(ids(await list(`project_id=${projectA}`, admin.token))).toEqual(['r0', 'r2', 'r4']);
    expect((await list(`project_id=${projectB}`, admin.token)).status).toBe(403);
    expect((await list('', admin.token)).status).toBe(403);
    const exported = await fetch(`${api.url}${EVENTS}/export?project_id=${projectB}`, {
      headers: bearer(admin.token),
    });
    expect(exported.status).toBe(403);
    const orgAdmin = await createTestUser(db, { orgRole: 'admin' });
    expect(ids(await list('', orgAdmin.token))).toHaveLength(6);
  });

  it('prunes rows older than the retention, and keeps the others', async () => {
    const old = `old_${randomUUID().slice(0, 8)}`;
    for (const days of [400, 366, 300, 1])
      await db('audit_events').insert({
        actor_type: 'system',
        action: `${old}.x`,
        resource_type: old,
        resource_id: String(days),
        at: new Date(Date.now() - days * 86_400_000),
      });
    expect(api.config.auth.auditRetentionDays).toBe(365);
    expect(await pruneAuditEvents(db, api.config.auth.auditRetentionDays)).toBeGreaterThanOrEqual(2);
    const left = await db('audit_events')
      .where({ resource_type: old })
      .orderBy('resource_id')
      .pluck('resource_id');
    expect(left).toEqual(['1', '300']);
  });
});
