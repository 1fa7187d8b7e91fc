import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName, type ProjectData } from '../helpers/factories.js';

const P = '/api/agent-server/projects';

describe('Projects API over real HTTP and Postgres', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api.close();
  });

  it('creates, reads, lists, updates and deletes a project', async () => {
    const name = uniqueName('life');
    const created = await api.request<ProjectData>('POST', P, { name, description: 'first' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ error: false, status: 200, errorDetails: {} });
    const project = created.body.data;
    expect(project).toMatchObject({ name, description: 'first' });
    expect(project.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(project.created_at)).not.toBeNaN();

    const got = await api.request<ProjectData>('GET', `${P}/${project.id}`);
    expect(got.body.data).toEqual(project);

    const list = await api.request<ProjectData[]>('GET', `${P}?limit=200`);
    expect(list.body.data.map((p) => p.id)).toContain(project.id);

    const patched = await api.request<ProjectData>('PATCH', `${P}/${project.id}`, { description: 'second' });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ id: project.id, name, description: 'second' });
    expect(Date.parse(patched.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(project.updated_at));

    const deleted = await api.request('DELETE', `${P}/${project.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ error: false, message: 'OK', data: {}, status: 200, errorDetails: {} });
    expect((await api.request('GET', `${P}/${project.id}`)).status).toBe(404);
  });

  it('lists newest first and pages with limit/offset', async () => {
    // Projects are global and other test files create them concurrently: assert order and paging, not exact contents.
    const a = await createProject(api);
    const b = await createProject(api);
    const all = (await api.request<ProjectData[]>('GET', `${P}?limit=200`)).body.data.map((p) => p.id);
    expect(all.indexOf(b.id)).toBeGreaterThanOrEqual(0);
    expect(all.indexOf(b.id)).toBeLessThan(all.indexOf(a.id));
    const created = (await api.request<ProjectData[]>('GET', `${P}?limit=200`)).body.data.map(
      (p) => p.created_at,
    );
    expect([...created].sort().reverse()).toEqual(created);
    const page = await api.request<ProjectData[]>('GET', `${P}?limit=2&offset=0`);
    expect(page.body.data).toHaveLength(2);
    const second = await api.request<ProjectData[]>('GET', `${P}?limit=2&offset=2`);
    expect(second.body.data.map((p) => p.id)).not.toContain(page.body.data[0]?.id);
  });

  it('answers a duplicate name with 409 and writes nothing', async () => {
    const p = await createProject(api);
    const dup = await api.request('POST', P, { name: p.name });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ error: true, message: 'Conflict', status: 409, data: {} });
    const other = await createProject(api);
    const rename = await api.request('PATCH', `${P}/${other.id}`, { name: p.name });
    expect(rename.status).toBe(409);
    expect((await api.request<ProjectData>('GET', `${P}/${other.id}`)).body.data.name).toBe(other.name);
  });

  it.each([
    ['empty name', { name: '' }, 'name'],
    ['300-character name', { name: 'x'.repeat(300) }, 'name'],
    ['missing name', { description: 'no name' }, 'name'],
    ['wrong type', { name: 42 }, 'name'],
    ['unknown field', { name: 'ok-name', colour: 'red' }, 'colour'],
  ])('rejects %s with 400 naming the field', async (_label, body, field) => {
    const res = await api.request('POST', P, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: true, message: 'Invalid request', status: 400, data: {} });
    expect(res.body.errorDetails.fields?.map((f) => f.field)).toContain(field);
    // Nothing written: no project carries the name that was sent.
    const names = (await api.request<ProjectData[]>('GET', `${P}?limit=200`)).body.data.map((p) => p.name);
    if (typeof (body as { name?: unknown }).name === 'string')
      expect(names).not.toContain((body as { name: string }).name);
  });

  it('answers a malformed id with 400 and an unknown one with 404', async () => {
    const bad = await api.request('GET', `${P}/not-a-uuid`);
    expect(bad.status).toBe(400);
    expect(bad.body.errorDetails.fields?.[0]?.field).toBe('id');
    for (const method of ['GET', 'DELETE']) {
      const missing = await api.request(method, `${P}/${randomUUID()}`);
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ error: true, message: 'Not found', status: 404 });
    }
    expect((await api.request('PATCH', `${P}/${randomUUID()}`, { description: 'x' })).status).toBe(404);
  });

  it('rejects an empty PATCH, invalid JSON, bad paging and oversize bodies', async () => {
    const p = await createProject(api);
    expect((await api.request('PATCH', `${P}/${p.id}`, {})).status).toBe(400);
    const broken = await api.request('POST', P, '{"name": ');
    expect(broken.status).toBe(400);
    expect(broken.body.errorDetails.fields?.[0]?.field).toBe('body');
    const limit = await api.request('GET', `${P}?limit=201`);
    expect(limit.status).toBe(400);
    expect(limit.body.errorDetails.fields?.[0]?.field).toBe('limit');
    expect((await api.request('GET', `${P}?offset=-1`)).status).toBe(400);
    const huge = await api.request('POST', P, { name: 'big', description: 'x'.repeat(11 * 1024 * 1024) });
    expect(huge.status).toBe(413);
    expect(huge.body).toMatchObject({ error: true, message: 'Payload too large', status: 413 });
  });

  it('puts the envelope on unknown routes and wrong methods, and an X-Request-Id on every response', async () => {
    const unknown = await api.request('GET', '/api/agent-server/no-such-thing');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: true, message: 'Not found', status: 404, data: {} });
    const wrong = await api.request('PUT', P);
    expect(wrong.status).toBe(405);
    expect(wrong.body).toMatchObject({ error: true, status: 405 });
    expect(unknown.headers.get('x-request-id')).toBeTruthy();
    const mine = await api.request('GET', P, undefined, { 'x-request-id': 'caller-chosen-id-1' });
    expect(mine.headers.get('x-request-id')).toBe('caller-chosen-id-1');
    expect(api.logs.text).toContain('caller-chosen-id-1');
  });
});

describe('ADMIN_TOKEN', () => {
  let api: TestApi;
  const token = 'admin-token-for-tests-0123456789';
  beforeAll(async () => {
    api = await startTestApi({ ADMIN_TOKEN: token });
  });
  afterAll(async () => {
    await api.close();
  });

  it('guards the configuration API but not health', async () => {
    const none = await api.request('GET', P);
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ error: true, message: 'Unauthorized', status: 401, data: {} });
    expect((await api.request('GET', P, undefined, { authorization: 'Bearer wrong-token' })).status).toBe(
      401,
    );
    expect((await api.request('GET', P, undefined, { authorization: `Bearer ${token}` })).status).toBe(200);
    expect((await api.request('GET', '/api/agent-server/health')).status).toBe(200);
  });
});
