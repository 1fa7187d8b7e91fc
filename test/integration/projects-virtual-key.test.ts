import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName, type ProjectData } from '../helpers/factories.js';
import { MODELS, createModel, createVirtualKey } from '../helpers/factories/config.js';

const P = '/api/agent-server/projects';
type Project = ProjectData & { virtual_key_id: string | null };

describe('Projects: virtual_key_id and deletion of non-empty projects', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api.close();
  });

  it('sets, shows, changes and clears virtual_key_id', async () => {
    const key = await createVirtualKey(api);
    const other = await createVirtualKey(api);
    const created = await api.request<Project>('POST', P, {
      name: uniqueName('project'),
      virtual_key_id: key.id,
    });
    expect(created.status).toBe(200);
    const project = created.body.data;
    expect(project.virtual_key_id).toBe(key.id);
    expect((await api.request<Project>('GET', `${P}/${project.id}`)).body.data).toEqual(project);

    const changed = await api.request<Project>('PATCH', `${P}/${project.id}`, { virtual_key_id: other.id });
    expect(changed.body.data).toMatchObject({ id: project.id, name: project.name, virtual_key_id: other.id });
    const cleared = await api.request<Project>('PATCH', `${P}/${project.id}`, { virtual_key_id: null });
    expect(cleared.body.data.virtual_key_id).toBeNull();

    const plain = await createProject(api);
    expect((plain as Project).virtual_key_id).toBeNull();
  });

  it('rejects an unknown or malformed virtual_key_id with 400 naming it, writing nothing', async () => {
    const name = uniqueName('project');
    for (const virtual_key_id of [randomUUID(), 'not-a-uuid', 5]) {
      const res = await api.request('POST', P, { name, virtual_key_id });
      expect(res.status).toBe(400);
      expect(res.body.errorDetails.fields?.map((f) => f.field)).toEqual(['virtual_key_id']);
    }
    expect(await api.server.deps.db('projects').where({ name }).first()).toBeUndefined();

    const project = await createProject(api);
    const bad = await api.request('PATCH', `${P}/${project.id}`, { virtual_key_id: randomUUID() });
    expect(bad.status).toBe(400);
    expect(bad.body.errorDetails.fields?.[0]?.field).toBe('virtual_key_id');
    expect((await api.request<Project>('GET', `${P}/${project.id}`)).body.data.virtual_key_id).toBeNull();
    const key = await createVirtualKey(api);
    expect((await api.request('PATCH', `${P}/${randomUUID()}`, { virtual_key_id: key.id })).status).toBe(404);
  });

  it('refuses to delete a project that still holds resources, naming them', async () => {
    const project = await createProject(api);
    const model = await createModel(api, project.id);
    const db = api.server.deps.db;
    const [prompt] = await db('prompts')
      .insert({ project_id: project.id, name: uniqueName('prompt') })
      .returning<Array<{ id: string; name: string }>>(['id', 'name']);
    await db('conversations').insert({ project_id: project.id, id: 'conv-1' });

    const refused = await api.request('DELETE', `${P}/${project.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: true, message: 'Conflict', status: 409, data: {} });
    expect(refused.body.errorDetails).toEqual({
      reason: 'still referenced',
      referenced_by: [
        { type: 'model', id: model.id, name: model.name },
        { type: 'prompt', id: prompt!.id, name: prompt!.name },
        { type: 'conversation', id: 'conv-1' },
      ],
    });
    expect((await api.request('GET', `${P}/${project.id}`)).status).toBe(200);

    await db('conversations').where({ project_id: project.id }).delete();
    await db('prompts').where({ project_id: project.id }).delete();
    expect((await api.request('DELETE', `${MODELS}/${model.id}`)).status).toBe(200);
    expect((await api.request('DELETE', `${P}/${project.id}`)).status).toBe(200);
    expect((await api.request('GET', `${P}/${project.id}`)).status).toBe(404);
  });
});
