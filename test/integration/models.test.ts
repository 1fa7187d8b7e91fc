import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrateLatest } from '../../core/db/knex.js';
import { startTestApi, type Envelope, type HttpResult, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName } from '../helpers/factories.js';
import {
  MODELS,
  createModel,
  createProvider,
  type ModelData,
  type ProviderData,
} from '../helpers/factories/config.js';
import { createScratchDatabase } from '../helpers/scratch-db.js';

describe('Models API over real HTTP and Postgres', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api.close();
  });

  const modelsIn = async (projectId: string) =>
    (await api.request<ModelData[]>('GET', `${MODELS}?project_id=${projectId}&limit=200`)).body.data;

  /** An agent row using the model; the agents API is another resource, so it goes in through knex. */
  async function insertAgentUsing(projectId: string, modelId: string, summarizerModelId?: string) {
    const db = api.server.deps.db;
    const [prompt] = await db('prompts')
      .insert({ project_id: projectId, name: uniqueName('prompt') })
      .returning<Array<{ id: string }>>('id');
    const name = uniqueName('agent');
    const [agent] = await db('agents')
      .insert({
        project_id: projectId,
        name,
        model_id: modelId,
        prompt_id: prompt!.id,
        llm_summarizer_model_id: summarizerModelId ?? null,
      })
      .returning<Array<{ id: string }>>('id');
    return { id: agent!.id, name };
  }

  it('creates, reads, lists, updates and deletes a model', async () => {
    const project = await createProject(api);
    const provider = await createProvider(api);
    const name = uniqueName('model');
    const created = await api.request<ModelData>('POST', `${MODELS}?project_id=${project.id}`, {
      name,
      model_id: 'gpt-4o-mini',
      provider_type: 'openai',
      provider_id: provider.id,
      parameters: { temperature: 0.2, max_tokens: 512, stop: ['END'], seed: 7, reasoning_effort: 'low' },
      pricing: { input_per_million_usd: 0.15, output_per_million_usd: 0.6 },
    });
    expect(created.status).toBe(200);
    const m = created.body.data;
    expect(m).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/) as string,
      project_id: project.id,
      name,
      model_id: 'gpt-4o-mini',
      provider_type: 'openai',
      provider_id: provider.id,
      // Unknown keys pass through as-is.
      parameters: { temperature: 0.2, max_tokens: 512, stop: ['END'], seed: 7, reasoning_effort: 'low' },
      pricing: { input_per_million_usd: 0.15, output_per_million_usd: 0.6 },
      max_output_tokens: null,
      created_at: expect.any(String) as string,
      updated_at: expect.any(String) as string,
    });

    expect((await api.request<ModelData>('GET', `${MODELS}/${m.id}`)).body.data).toEqual(m);
    expect(
      (await api.request<ModelData>('GET', `${MODELS}/${m.id}?project_id=${project.id}`)).body.data,
    ).toEqual(m);
    expect((await modelsIn(project.id)).map((x) => x.id)).toEqual([m.id]);

    const patched = await api.request<ModelData>('PATCH', `${MODELS}/${m.id}?project_id=${project.id}`, {
      parameters: { temperature: 1 },
      pricing: null,
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      id: m.id,
      name,
      parameters: { temperature: 1 },
      pricing: null,
      provider_id: provider.id,
    });

    const deleted = await api.request('DELETE', `${MODELS}/${m.id}`);
    expect(deleted.body).toEqual({ error: false, message: 'OK', data: {}, status: 200, errorDetails: {} });
    expect((await api.request('GET', `${MODELS}/${m.id}`)).status).toBe(404);
  });

  it('creates a model from the documented fields and its provider, with empty parameters and pricing', async () => {
    const project = await createProject(api);
    const gemini = await createProvider(api, { provider_type: 'gemini' });
    const res = await api.request<ModelData>('POST', `${MODELS}?project_id=${project.id}`, {
      name: uniqueName('model'),
      model_id: 'gemini-2.0-flash',
      provider_type: 'gemini',
      provider_id: gemini.id,
    });
    expect(res.body.data).toMatchObject({
      provider_type: 'gemini',
      provider_id: gemini.id,
      parameters: {},
      pricing: null,
    });
    expect(res.body.data).toHaveProperty('max_output_tokens', null);
  });

  it('keeps an output ceiling, changes it and clears it', async () => {
    const project = await createProject(api);
    const m = await createModel(api, project.id, { model_id: 'in-house-model', max_output_tokens: 8_000 });
    expect(m).toMatchObject({ max_output_tokens: 8_000 });
    const patched = await api.request('PATCH', `${MODELS}/${m.id}`, { max_output_tokens: 12_000 });
    expect(patched.body.data).toMatchObject({ max_output_tokens: 12_000 });
    const cleared = await api.request('PATCH', `${MODELS}/${m.id}`, { max_output_tokens: null });
    expect(cleared.body.data).toMatchObject({ max_output_tokens: null });
  });

  it('lists only the project, newest first', async () => {
    const project = await createProject(api);
    const other = await createProject(api);
    const a = await createModel(api, project.id);
    const b = await createModel(api, project.id);
    await createModel(api, other.id);
    expect((await modelsIn(project.id)).map((x) => x.id)).toEqual([b.id, a.id]);
    const page = await api.request<ModelData[]>('GET', `${MODELS}?project_id=${project.id}&limit=1&offset=1`);
    expect(page.body.data.map((x) => x.id)).toEqual([a.id]);
  });

  it.each([
    ['unknown field', { colour: 'red' }, ['colour']],
    [
      'missing fields',
      { name: undefined, model_id: undefined, provider_type: undefined },
      ['name', 'model_id', 'provider_type'],
    ],
    ['over-long name', { name: 'n'.repeat(201) }, ['name']],
    ['unknown provider_type', { provider_type: 'cohere' }, ['provider_type']],
    ['malformed provider_id', { provider_id: 'abc' }, ['provider_id']],
    ['unknown provider_id', { provider_id: randomUUID() }, ['provider_id']],
    ['temperature out of range', { parameters: { temperature: 2.5 } }, ['parameters.temperature']],
    ['top_p out of range', { parameters: { top_p: -0.1 } }, ['parameters.top_p']],
    [
      'non-positive and fractional max_tokens',
      { parameters: { max_tokens: 0, seed: 1.5 } },
      ['parameters.max_tokens', 'parameters.seed'],
    ],
    [
      'penalties out of range',
      { parameters: { presence_penalty: 3, frequency_penalty: -2.1 } },
      ['parameters.presence_penalty', 'parameters.frequency_penalty'],
    ],
    ['five stop strings', { parameters: { stop: ['a', 'b', 'c', 'd', 'e'] } }, ['parameters.stop']],
    ['string temperature', { parameters: { temperature: '0.5' } }, ['parameters.temperature']],
    ['parameters that are no object', { parameters: [1, 2] }, ['parameters']],
    [
      'negative price',
      { pricing: { input_per_million_usd: -1, output_per_million_usd: 1 } },
      ['pricing.input_per_million_usd'],
    ],
    ['incomplete pricing', { pricing: { input_per_million_usd: 1 } }, ['pricing.output_per_million_usd']],
    ['a zero output ceiling', { max_output_tokens: 0 }, ['max_output_tokens']],
    ['a fractional output ceiling', { max_output_tokens: 10.5 }, ['max_output_tokens']],
  ])('rejects %s with 400 naming each field, and writes nothing', async (_label, patch, fields) => {
    const project = await createProject(api);
    const body = { name: uniqueName('model'), model_id: 'gpt-test', provider_type: 'openai', ...patch };
    const res = await api.request('POST', `${MODELS}?project_id=${project.id}`, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: true, message: 'Invalid request', status: 400, data: {} });
    const named = res.body.errorDetails.fields?.map((f) => f.field);
    for (const field of fields) expect(named).toContain(field);
    expect(await modelsIn(project.id)).toEqual([]);
  });

  it('rejects a provider whose type differs from the model, on create and on update', async () => {
    const project = await createProject(api);
    const anthropic = await createProvider(api, { provider_type: 'anthropic' });
    const res = await api.request('POST', `${MODELS}?project_id=${project.id}`, {
      name: uniqueName('model'),
      model_id: 'gpt-4o',
      provider_type: 'openai',
      provider_id: anthropic.id,
    });
    expect(res.status).toBe(400);
    expect(res.body.errorDetails.fields).toEqual([
      expect.objectContaining({ field: 'provider_id', type: 'any.mismatch' }),
    ]);
    expect(await modelsIn(project.id)).toEqual([]);

    const m = await createModel(api, project.id, { provider_type: 'anthropic', provider_id: anthropic.id });
    const switched = await api.request('PATCH', `${MODELS}/${m.id}`, { provider_type: 'openai' });
    expect(switched.status).toBe(400);
    expect(switched.body.errorDetails.fields?.[0]?.field).toBe('provider_id');
    // Changing both together is consistent and allowed.
    const openai = await createProvider(api);
    const both = await api.request<ModelData>('PATCH', `${MODELS}/${m.id}`, {
      provider_type: 'openai',
      provider_id: openai.id,
    });
    expect(both.body.data).toMatchObject({ provider_type: 'openai', provider_id: openai.id });
  });

  it('needs ?project_id= on create and list, and answers an unknown project with 404', async () => {
    const noProject = await api.request('POST', MODELS, {
      name: 'm',
      model_id: 'x',
      provider_type: 'openai',
    });
    expect(noProject.status).toBe(400);
    expect(noProject.body.errorDetails.fields?.[0]?.field).toBe('project_id');
    expect((await api.request('GET', MODELS)).status).toBe(400);
    expect((await api.request('GET', `${MODELS}?project_id=zzz`)).status).toBe(400);
    const ghost = randomUUID();
    const create = await api.request('POST', `${MODELS}?project_id=${ghost}`, {
      name: 'm',
      model_id: 'x',
      provider_type: 'openai',
    });
    expect(create.status).toBe(404);
    expect(create.body).toMatchObject({ error: true, message: 'Not found', status: 404 });
    expect((await api.request('GET', `${MODELS}?project_id=${ghost}`)).status).toBe(404);
  });

  it('answers a malformed id with 400, and an unknown id or another project with 404', async () => {
    const project = await createProject(api);
    const other = await createProject(api);
    const m = await createModel(api, project.id);
    expect((await api.request('GET', `${MODELS}/not-a-uuid`)).body.errorDetails.fields?.[0]?.field).toBe(
      'id',
    );
    for (const method of ['GET', 'DELETE']) {
      expect((await api.request(method, `${MODELS}/${randomUUID()}`)).status).toBe(404);
      expect((await api.request(method, `${MODELS}/${m.id}?project_id=${other.id}`)).status).toBe(404);
    }
    expect(
      (await api.request('PATCH', `${MODELS}/${m.id}?project_id=${other.id}`, { model_id: 'y' })).status,
    ).toBe(404);
    expect((await api.request('PATCH', `${MODELS}/${randomUUID()}`, { model_id: 'y' })).status).toBe(404);
    expect((await api.request<ModelData>('GET', `${MODELS}/${m.id}`)).body.data).toEqual(m);
  });

  it('answers a duplicate name within a project with 409, and allows it across projects', async () => {
    const project = await createProject(api);
    const m = await createModel(api, project.id);
    const dup = await api.request('POST', `${MODELS}?project_id=${project.id}`, {
      name: m.name,
      model_id: 'x',
      provider_type: 'openai',
      provider_id: m.provider_id,
    });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ message: 'Conflict', errorDetails: { field: 'name' } });
    const second = await createModel(api, project.id);
    expect((await api.request('PATCH', `${MODELS}/${second.id}`, { name: m.name })).status).toBe(409);
    const elsewhere = await createProject(api);
    expect((await createModel(api, elsewhere.id, { name: m.name })).name).toBe(m.name);
  });

  it('refuses to delete a model an agent uses, naming the agents', async () => {
    const project = await createProject(api);
    const m = await createModel(api, project.id);
    const summarizer = await createModel(api, project.id);
    const agent = await insertAgentUsing(project.id, m.id, summarizer.id);
    for (const model of [m, summarizer]) {
      const res = await api.request('DELETE', `${MODELS}/${model.id}`);
      expect(res.status).toBe(409);
      expect(res.body.errorDetails).toEqual({
        reason: 'still referenced',
        referenced_by: [{ type: 'agent', id: agent.id, name: agent.name }],
      });
    }
    expect((await modelsIn(project.id)).length).toBe(2);
    await api.server.deps.db('agents').where({ id: agent.id }).delete();
    expect((await api.request('DELETE', `${MODELS}/${m.id}`)).status).toBe(200);
  });
});

/**
 * Which providers could serve a model that names none is a question about
 * every provider of the server (providers are global), and the run's database
 * holds every other test's providers: these tests count on a database of their own.
 */
describe('A model that names no provider, on a server of its own', () => {
  // Each test counts the providers of its own type: anthropic, gemini, openai.
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>> | undefined;
  let api: TestApi;
  beforeAll(async () => {
    scratch = await createScratchDatabase('models_choice');
    const db = createDb(scratch.url, { max: 2 });
    await migrateLatest(db);
    await db.destroy();
    api = await startTestApi({ DATABASE_URL: scratch.url });
  });
  afterAll(async () => {
    await api?.close();
    await scratch?.drop();
  });

  const post = (projectId: string, body: Record<string, unknown>) =>
    api.request<ModelData>('POST', `${MODELS}?project_id=${projectId}`, {
      name: uniqueName('model'),
      model_id: 'some-model',
      ...body,
    });
  const patch = (id: string, body: Record<string, unknown>) =>
    api.request<ModelData>('PATCH', `${MODELS}/${id}`, body);

  /** The one field error of a refusal for an ambiguous provider, naming every provider given. */
  function expectAmbiguous(res: HttpResult<Envelope<unknown>>, candidates: ProviderData[]) {
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: true, message: 'Invalid request', status: 400, data: {} });
    expect(res.body.errorDetails.fields).toEqual([
      expect.objectContaining({ field: 'provider_id', type: 'any.ambiguous' }),
    ]);
    const message = res.body.errorDetails.fields![0]!.message;
    for (const p of candidates) expect(message).toContain(`${p.name} (${p.id})`);
    return message;
  }

  it('is kept while at most one provider of its type exists, and refused naming the candidates once several do', async () => {
    const project = await createProject(api);
    const beforeAny = await post(project.id, { provider_type: 'anthropic' });
    expect(beforeAny.status).toBe(200);
    expect(beforeAny.body.data.provider_id).toBeNull();

    const first = await createProvider(api, { provider_type: 'anthropic' });
    await createProvider(api, { provider_type: 'openai' });
    const sole = await post(project.id, { provider_type: 'anthropic' });
    expect(sole.status).toBe(200);
    expect(sole.body.data).toMatchObject({ provider_type: 'anthropic', provider_id: null });

    const second = await createProvider(api, { provider_type: 'anthropic' });
    const refused = await post(project.id, { provider_type: 'anthropic' });
    expect(expectAmbiguous(refused, [first, second])).toContain('2 providers of type anthropic');
    expectAmbiguous(await post(project.id, { provider_type: 'anthropic', provider_id: null }), [
      first,
      second,
    ]);
    expect((await modelsIn(project.id)).length).toBe(2);

    const pinned = await post(project.id, { provider_type: 'anthropic', provider_id: second.id });
    expect(pinned.body.data).toMatchObject({ provider_id: second.id });
  });

  it('is refused on update: clearing the provider, switching type, or saving a model left without one', async () => {
    const project = await createProject(api);
    const g1 = await createProvider(api, { provider_type: 'gemini' });
    const unpinned = (await post(project.id, { provider_type: 'gemini' })).body.data;
    const pinned = (await post(project.id, { provider_type: 'gemini', provider_id: g1.id })).body.data;
    expect(unpinned.provider_id).toBeNull();
    const g2 = await createProvider(api, { provider_type: 'gemini' });
    const candidates = [g1, g2];

    expectAmbiguous(await patch(unpinned.id, { name: uniqueName('renamed') }), candidates);
    expectAmbiguous(await patch(pinned.id, { provider_id: null }), candidates);
    const openai = await createProvider(api, { provider_type: 'openai' });
    const other = (await post(project.id, { provider_type: 'openai', provider_id: openai.id })).body.data;
    expectAmbiguous(await patch(other.id, { provider_type: 'gemini', provider_id: null }), candidates);
    expect((await api.request<ModelData>('GET', `${MODELS}/${pinned.id}`)).body.data).toEqual(pinned);

    const chosen = await patch(unpinned.id, { provider_id: g2.id, name: uniqueName('renamed') });
    expect(chosen.status).toBe(200);
    expect(chosen.body.data.provider_id).toBe(g2.id);
  });

  it('names ten candidates and says how many more there are', async () => {
    const project = await createProject(api);
    for (let i = 0; i < 11; i++) await createProvider(api, { provider_type: 'openai' });
    const openai = await providersOf('openai');
    const message = expectAmbiguous(await post(project.id, { provider_type: 'openai' }), openai.slice(0, 10));
    expect(message).toContain(`${openai.length} providers of type openai`);
    expect(message).toContain(`and ${openai.length - 10} more`);
    expect(message).not.toContain(openai[10]!.id);
  });

  /** This server's providers of a type, oldest first (the order the refusal names them in). */
  async function providersOf(type: string): Promise<ProviderData[]> {
    const all = (await api.request<ProviderData[]>('GET', '/api/agent-server/providers?limit=200')).body.data;
    return all.filter((p) => p.provider_type === type).reverse();
  }

  const modelsIn = async (projectId: string) =>
    (await api.request<ModelData[]>('GET', `${MODELS}?project_id=${projectId}&limit=200`)).body.data;
});
