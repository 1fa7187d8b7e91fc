import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName } from '../helpers/factories.js';
import {
  createPrompt,
  db,
  expectEnvelope,
  insertAgent,
  PROMPTS as P,
  randomBody,
  type PromptData,
  type PromptVersionData,
} from '../helpers/factories/content.js';

describe('Prompts API over real HTTP and Postgres', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api.close();
  });

  const versionsOf = async (name: string, projectId: string) =>
    (await api.request<PromptVersionData[]>('GET', `${P}/${name}/versions?project_id=${projectId}&limit=200`))
      .body.data;

  it('creates a prompt, adds versions, reads them by name and number, lists and deletes', async () => {
    const project = await createProject(api);
    const name = uniqueName('greeter');
    const created = await api.request<PromptData>('POST', `${P}?project_id=${project.id}`, {
      name,
      template: 'Hello {{ user.name }}',
      commit_message: 'initial',
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ error: false, status: 200, errorDetails: {} });
    const prompt = created.body.data;
    expect(prompt).toMatchObject({
      project_id: project.id,
      name,
      latest_version: 1,
      labels: { production: null, latest: 1 },
    });
    expect(prompt.id).toMatch(/^[0-9a-f-]{36}$/);

    const v2 = await api.request<PromptVersionData>(
      'POST',
      `${P}/${name}/versions?project_id=${project.id}`,
      {
        template: 'Hi {{name}}, today is {{day}}',
        commit_message: 'shorter',
      },
    );
    expect(v2.status).toBe(200);
    expect(v2.body.data).toMatchObject({
      prompt_id: prompt.id,
      name,
      version: 2,
      template: 'Hi {{name}}, today is {{day}}',
      commit_message: 'shorter',
      label: 'latest',
      labels: ['latest'],
      variables: ['name', 'day'],
    });
    expect(v2.body.data.id).toMatch(/^[0-9a-f-]{36}$/);

    const v1 = await api.request<PromptVersionData>(
      'GET',
      `${P}/${name}/versions/1?project_id=${project.id}`,
    );
    expect(v1.status).toBe(200);
    expect(v1.body.data).toMatchObject({
      version: 1,
      template: 'Hello {{ user.name }}',
      commit_message: 'initial',
      label: null,
      labels: [],
      prompt_id: prompt.id,
    });
    expect(Date.parse(v1.body.data.created_at)).not.toBeNaN();

    const byName = await api.request<PromptData>('GET', `${P}/by-name?name=${name}&project_id=${project.id}`);
    expect(byName.body.data).toMatchObject({
      id: prompt.id,
      name,
      latest_version: 2,
      created_at: prompt.created_at,
    });

    expect((await versionsOf(name, project.id)).map((v) => v.version)).toEqual([2, 1]);
    const page = await api.request<PromptVersionData[]>('GET', `${P}/${name}/versions?limit=1&offset=1`);
    expect(page.body.data.map((v) => v.version)).toEqual([1]);

    const other = await createPrompt(api, project.id);
    const list = await api.request<PromptData[]>('GET', `${P}?project_id=${project.id}`);
    expect(list.body.data.map((p) => [p.name, p.latest_version])).toEqual([
      [other.name, 1],
      [name, 2],
    ]);

    const deleted = await api.request('DELETE', `${P}/${name}?project_id=${project.id}`);
    expect(deleted.body).toEqual({ error: false, message: 'OK', data: {}, status: 200, errorDetails: {} });
    expect((await api.request('GET', `${P}/by-name?name=${name}`)).status).toBe(404);
    expect(await db(api)('prompt_versions').where({ prompt_id: prompt.id }).count('* as n').first()).toEqual({
      n: 0,
    });
  });

  it('moves latest by itself and production only when assigned', async () => {
    const project = await createProject(api);
    const prompt = await createPrompt(api, project.id, { label: 'production' });
    const base = `${P}/${prompt.name}/versions`;
    const v1 = await api.request<PromptVersionData>('GET', `${base}/1`);
    expect(v1.body.data).toMatchObject({ label: 'production', labels: ['production', 'latest'] });

    await api.request('POST', base, { template: 'two', commit_message: 'v2' });
    const after2 = await versionsOf(prompt.name, project.id);
    expect(after2.map((v) => [v.version, v.label, v.labels])).toEqual([
      [2, 'latest', ['latest']],
      [1, 'production', ['production']],
    ]);

    const v3 = await api.request<PromptVersionData>('POST', base, {
      template: 'three',
      commit_message: 'v3',
      label: 'production',
    });
    expect(v3.body.data).toMatchObject({ version: 3, label: 'production', labels: ['production', 'latest'] });
    expect((await versionsOf(prompt.name, project.id)).map((v) => v.label)).toEqual([
      'production',
      null,
      null,
    ]);

    // Move production back to version 1 by assignment; latest stays on 3.
    const moved = await api.request<PromptVersionData>('PATCH', `${base}/1`, { label: 'production' });
    expect(moved.status).toBe(200);
    expect(moved.body.data).toMatchObject({ version: 1, label: 'production', labels: ['production'] });
    expect((await versionsOf(prompt.name, project.id)).map((v) => v.labels)).toEqual([
      ['latest'],
      [],
      ['production'],
    ]);
    const summary = await api.request<PromptData>('GET', `${P}/by-name?name=${prompt.name}`);
    expect(summary.body.data.labels).toEqual({ production: 1, latest: 3 });

    // latest cannot be pinned to an old version; on the newest it is a no-op.
    const pin = await api.request('PATCH', `${base}/2`, { label: 'latest' });
    expect(pin.status).toBe(400);
    expect(pin.body.errorDetails.fields?.map((f) => f.field)).toEqual(['label']);
    expect(
      (await api.request<PromptVersionData>('PATCH', `${base}/3`, { label: 'latest' })).body.data.labels,
    ).toEqual(['latest']);

    // Versions are immutable: the template and message of version 1 are what they were.
    const v1Again = await api.request<PromptVersionData>('GET', `${base}/1`);
    expect(v1Again.body.data).toMatchObject({ template: 'You are {{role}}.', commit_message: 'first' });
    expect((await api.request('PATCH', `${base}/1`, { template: 'changed' })).status).toBe(400);
  });

  it('numbers concurrently added versions without gaps or duplicates', async () => {
    const project = await createProject(api);
    const prompt = await createPrompt(api, project.id);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api.request<PromptVersionData>('POST', `${P}/${prompt.name}/versions?project_id=${project.id}`, {
          template: `version from writer ${i}`,
          commit_message: `writer ${i}`,
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(results.map((r) => r.body.data.version).sort((a, b) => a - b)).toEqual([
      2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
    ]);
    const versions = await versionsOf(prompt.name, project.id);
    expect(versions.map((v) => v.version)).toEqual([11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect(versions.filter((v) => v.labels.includes('latest')).map((v) => v.version)).toEqual([11]);
  });

  it('resolves names across projects only when unambiguous', async () => {
    const a = await createProject(api);
    const b = await createProject(api);
    const name = uniqueName('shared');
    const inA = await createPrompt(api, a.id, { name });
    const alone = await api.request<PromptData>('GET', `${P}/by-name?name=${name}`);
    expect(alone.body.data.id).toBe(inA.id);

    const inB = await createPrompt(api, b.id, { name, template: 'b side' });
    for (const [method, path, body] of [
      ['GET', `${P}/by-name?name=${name}`, undefined],
      ['GET', `${P}/${name}/versions`, undefined],
      ['GET', `${P}/${name}/versions/1`, undefined],
      ['POST', `${P}/${name}/versions`, { template: 'x', commit_message: 'x' }],
      ['PATCH', `${P}/${name}/versions/1`, { label: 'production' }],
      ['DELETE', `${P}/${name}`, undefined],
    ] as const) {
      const res = await api.request(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body.errorDetails.fields?.map((f) => f.field)).toEqual(['project_id']);
    }
    const inBByName = await api.request<PromptData>('GET', `${P}/by-name?name=${name}&project_id=${b.id}`);
    expect(inBByName.body.data.id).toBe(inB.id);
    const v = await api.request<PromptVersionData>('GET', `${P}/${name}/versions/1?project_id=${a.id}`);
    expect(v.body.data.prompt_id).toBe(inA.id);
    // Nothing was written by the ambiguous calls.
    expect((await versionsOf(name, a.id)).length).toBe(1);
    expect((await versionsOf(name, b.id)).map((x) => x.labels)).toEqual([['latest']]);
  });

  it.each([
    ['unknown field', { colour: 'red' }, 'colour'],
    ['wrong type template', { template: 42 }, 'template'],
    ['missing commit message', { commit_message: undefined }, 'commit_message'],
    ['unknown label', { label: 'staging' }, 'label'],
    ['empty name', { name: '' }, 'name'],
    ['201-character name', { name: 'x'.repeat(201) }, 'name'],
    ['unclosed placeholder', { template: 'Hello {{name' }, 'template'],
    ['invalid variable name', { template: 'Hello {{first-name}}' }, 'template'],
    ['stray closing braces', { template: 'Hello name}}' }, 'template'],
    ['template over 1 MiB', { template: 'é'.repeat(600_000) }, 'template'],
  ])('rejects a create with %s (400 naming the field, nothing written)', async (_label, patch, field) => {
    const project = await createProject(api);
    const res = await api.request('POST', `${P}?project_id=${project.id}`, {
      name: uniqueName('bad'),
      template: 'ok {{x}}',
      commit_message: 'm',
      ...patch,
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: true, message: 'Invalid request', status: 400, data: {} });
    expect(res.body.errorDetails.fields?.map((f) => f.field)).toContain(field);
    expect((await api.request<PromptData[]>('GET', `${P}?project_id=${project.id}`)).body.data).toEqual([]);
  });

  it('names every bad field at once and rejects bad versions without writing', async () => {
    const project = await createProject(api);
    const many = await api.request('POST', `${P}?project_id=${project.id}`, {
      name: 5,
      template: [],
      extra: 1,
    });
    expect(many.body.errorDetails.fields?.map((f) => f.field).sort()).toEqual(
      ['commit_message', 'extra', 'name', 'template'].sort(),
    );
    const prompt = await createPrompt(api, project.id);
    const bad = await api.request('POST', `${P}/${prompt.name}/versions`, {
      template: '{{ 9lives }}',
      commit_message: 'x',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errorDetails.fields?.[0]).toMatchObject({ field: 'template', type: 'template.syntax' });
    expect(bad.body.errorDetails.fields?.[0]?.message).toMatch(/invalid variable name/);
    expect((await versionsOf(prompt.name, project.id)).length).toBe(1);
    expect(
      (await api.request('GET', `${P}/${prompt.name}/versions/zero`)).body.errorDetails.fields?.[0]?.field,
    ).toBe('version');
    expect((await api.request('GET', `${P}?project_id=not-a-uuid`)).status).toBe(400);
    expect((await api.request('GET', P)).body.errorDetails.fields?.[0]?.field).toBe('project_id');
    expect((await api.request('GET', `${P}/by-name`)).body.errorDetails.fields?.[0]?.field).toBe('name');
  });

  it('answers 404 for unknown projects, prompts and versions', async () => {
    const project = await createProject(api);
    const prompt = await createPrompt(api, project.id);
    const missing = [
      ['POST', `${P}?project_id=${randomUUID()}`, { name: 'x', template: 't', commit_message: 'm' }],
      ['GET', `${P}?project_id=${randomUUID()}`, undefined],
      ['GET', `${P}/by-name?name=${uniqueName('nope')}`, undefined],
      ['GET', `${P}/by-name?name=${prompt.name}&project_id=${randomUUID()}`, undefined],
      ['GET', `${P}/${uniqueName('nope')}/versions`, undefined],
      ['GET', `${P}/${prompt.name}/versions/2`, undefined],
      ['PATCH', `${P}/${prompt.name}/versions/9`, { label: 'production' }],
      ['POST', `${P}/${uniqueName('nope')}/versions`, { template: 't', commit_message: 'm' }],
      ['DELETE', `${P}/${uniqueName('nope')}`, undefined],
    ] as const;
    for (const [method, path, body] of missing) {
      const res = await api.request(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toMatchObject({ error: true, message: 'Not found', status: 404, data: {} });
    }
  });

  it('answers a duplicate name in the project with 409; other projects may reuse it', async () => {
    const project = await createProject(api);
    const prompt = await createPrompt(api, project.id);
    const dup = await api.request('POST', `${P}?project_id=${project.id}`, {
      name: prompt.name,
      template: 'again',
      commit_message: 'again',
    });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ error: true, message: 'Conflict', errorDetails: { field: 'name' } });
    expect((await versionsOf(prompt.name, project.id)).length).toBe(1);
    const elsewhere = await createProject(api);
    expect((await createPrompt(api, elsewhere.id, { name: prompt.name })).name).toBe(prompt.name);
  });

  it('refuses to delete a prompt an agent uses, naming the agents', async () => {
    const project = await createProject(api);
    const prompt = await createPrompt(api, project.id);
    const summarizer = await createPrompt(api, project.id);
    const agent = await insertAgent(api, project.id, { prompt_id: prompt.id });
    const user = await insertAgent(api, project.id, {
      prompt_id: prompt.id,
      llm_summarizer_prompt_id: summarizer.id,
    });

    const res = await api.request('DELETE', `${P}/${prompt.name}?project_id=${project.id}`);
    expect(res.status).toBe(409);
    expect(res.body.errorDetails).toEqual({
      reason: 'still referenced',
      referenced_by: [agent, user]
        .sort((x, y) => x.name.localeCompare(y.name))
        .map((a) => ({ type: 'agent', id: a.id, name: a.name })),
    });
    const viaSummarizer = await api.request('DELETE', `${P}/${summarizer.name}`);
    expect(viaSummarizer.status).toBe(409);
    expect(viaSummarizer.body.errorDetails.referenced_by).toEqual([
      { type: 'agent', id: user.id, name: user.name },
    ]);
    expect((await versionsOf(prompt.name, project.id)).length).toBe(1);

    await db(api)('agents').whereIn('id', [agent.id, user.id]).delete();
    expect((await api.request('DELETE', `${P}/${prompt.name}`)).status).toBe(200);
  });

  it('answers random bodies on every write route with the envelope, never a 5xx, and writes nothing on a 400', async () => {
    const project = await createProject(api);
    const prompt = await createPrompt(api, project.id);
    const snapshot = async () => {
      const r = await db(api)('prompts')
        .join('prompt_versions', 'prompt_versions.prompt_id', 'prompts.id')
        .leftJoin('prompt_labels', 'prompt_labels.version_id', 'prompt_versions.id')
        .where('prompts.project_id', project.id)
        .select('prompt_versions.id', 'prompt_labels.label')
        .orderBy(['prompt_versions.id', 'prompt_labels.label']);
      return JSON.stringify(r);
    };
    const routes = [
      ['POST', `${P}?project_id=${project.id}`, ['name', 'template', 'commit_message', 'label']],
      ['POST', `${P}/${prompt.name}/versions`, ['template', 'commit_message', 'label']],
      ['PATCH', `${P}/${prompt.name}/versions/1`, ['label']],
    ] as const;
    for (const [method, path, keys] of routes) {
      await fc.assert(
        fc.asyncProperty(randomBody([...keys]), async (body) => {
          const before = await snapshot();
          const status = expectEnvelope(await api.request(method, path, body));
          if (status === 400) expect(await snapshot()).toBe(before);
        }),
        { numRuns: 40 },
      );
    }
  });

  it('documents every prompt route in the OpenAPI document', async () => {
    const doc = await api.request<never>('GET', '/api/agent-server/openapi.json');
    const paths = (JSON.parse(doc.text) as { paths: Record<string, Record<string, unknown>> }).paths;
    expect(Object.keys(paths[P] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(paths[`${P}/by-name`] ?? {})).toEqual(['get']);
    expect(Object.keys(paths[`${P}/{name}/versions/{version}`] ?? {}).sort()).toEqual(['get', 'patch']);
  });
});
