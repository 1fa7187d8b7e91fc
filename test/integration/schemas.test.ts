import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName } from '../helpers/factories.js';
import {
  createPrompt,
  createSchema,
  db,
  expectEnvelope,
  insertAgent,
  randomBody,
  SCHEMAS as S,
  type SchemaData,
} from '../helpers/factories/content.js';

const answer = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    answer: { type: 'string' },
    sources: { type: 'array', items: { type: 'string', format: 'uri' } },
  },
  required: ['answer'],
  additionalProperties: false,
};

describe('Schemas API over real HTTP and Postgres', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api.close();
  });

  const listOf = async (projectId: string) =>
    (await api.request<SchemaData[]>('GET', `${S}?project_id=${projectId}`)).body.data;

  it('creates, reads, lists, updates and deletes a schema', async () => {
    const project = await createProject(api);
    const name = uniqueName('answer');
    const created = await api.request<SchemaData>('POST', `${S}?project_id=${project.id}`, {
      name,
      description: 'final answer',
      schema: answer,
    });
    expect(created.status).toBe(200);
    const schema = created.body.data;
    expect(schema).toMatchObject({
      project_id: project.id,
      name,
      description: 'final answer',
      schema: answer,
    });
    expect(schema.id).toMatch(/^[0-9a-f-]{36}$/);

    expect((await api.request<SchemaData>('GET', `${S}/${schema.id}`)).body.data).toEqual(schema);
    expect((await api.request<SchemaData>('GET', `${S}/${schema.id}?project_id=${project.id}`)).status).toBe(
      200,
    );
    const second = await createSchema(api, project.id, {
      schema: { type: 'array', items: { type: 'number' } },
    });
    expect((await listOf(project.id)).map((x) => x.id)).toEqual([second.id, schema.id]);
    const page = await api.request<SchemaData[]>('GET', `${S}?project_id=${project.id}&limit=1&offset=1`);
    expect(page.body.data.map((x) => x.id)).toEqual([schema.id]);

    const replaced = { type: 'object', properties: { verdict: { enum: ['yes', 'no'] } } };
    const patched = await api.request<SchemaData>('PATCH', `${S}/${schema.id}`, {
      schema: replaced,
      description: null,
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ id: schema.id, name, description: null, schema: replaced });
    expect((await api.request<SchemaData>('GET', `${S}/${schema.id}`)).body.data.schema).toEqual(replaced);

    const deleted = await api.request('DELETE', `${S}/${schema.id}`);
    expect(deleted.body).toEqual({ error: false, message: 'OK', data: {}, status: 200, errorDetails: {} });
    expect((await api.request('GET', `${S}/${schema.id}`)).status).toBe(404);
  });

  it('keeps arrays and nested objects in the stored schema intact', async () => {
    const project = await createProject(api);
    const schema = {
      type: ['object', 'null'],
      $defs: { tag: { type: 'string' } },
      prefixItems: [{ $ref: '#/$defs/tag' }],
    };
    const created = await createSchema(api, project.id, { schema });
    const row = (await db(api)('schemas').where({ id: created.id }).first()) as { schema: unknown };
    expect(row.schema).toEqual(schema);
  });

  it.each([
    ['a wrong type keyword', { type: 'nope' }, /must be equal to one of the allowed values/],
    ['a negative minLength', { type: 'string', minLength: -1 }, /minLength must be >= 0/],
    ['an unresolvable $ref', { $ref: '#/$defs/missing' }, /can't resolve reference/],
  ])('rejects %s with 400 and the compiler message, writing nothing', async (_label, schema, message) => {
    const project = await createProject(api);
    const res = await api.request('POST', `${S}?project_id=${project.id}`, {
      name: uniqueName('bad'),
      schema,
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: true, message: 'Invalid request', status: 400, data: {} });
    const field = res.body.errorDetails.fields?.[0];
    expect(field).toMatchObject({ field: 'schema', type: 'schema.invalid' });
    expect(field?.message).toMatch(message);
    expect(await listOf(project.id)).toEqual([]);
  });

  it('rejects an invalid schema on update and leaves the stored one alone', async () => {
    const project = await createProject(api);
    const schema = await createSchema(api, project.id);
    const res = await api.request('PATCH', `${S}/${schema.id}`, { schema: { type: 42 }, name: 'renamed' });
    expect(res.status).toBe(400);
    expect(res.body.errorDetails.fields?.map((f) => f.field)).toEqual(['schema']);
    expect((await api.request<SchemaData>('GET', `${S}/${schema.id}`)).body.data).toEqual(schema);
  });

  it.each([
    ['unknown field', { colour: 'red' }, 'colour'],
    ['schema that is not an object', { schema: 'string' }, 'schema'],
    ['schema that is an array', { schema: [] }, 'schema'],
    ['missing schema', { schema: undefined }, 'schema'],
    ['numeric name', { name: 7 }, 'name'],
    ['201-character name', { name: 'n'.repeat(201) }, 'name'],
    ['numeric description', { description: 3 }, 'description'],
  ])('rejects a create with %s (400 naming the field)', async (_label, patch, field) => {
    const project = await createProject(api);
    const res = await api.request('POST', `${S}?project_id=${project.id}`, {
      name: uniqueName('s'),
      schema: { type: 'object' },
      ...patch,
    });
    expect(res.status).toBe(400);
    expect(res.body.errorDetails.fields?.map((f) => f.field)).toContain(field);
    expect(await listOf(project.id)).toEqual([]);
  });

  it('answers 400 for malformed ids and an empty PATCH, 404 for unknown ones and other projects', async () => {
    const project = await createProject(api);
    const other = await createProject(api);
    const schema = await createSchema(api, project.id);
    expect((await api.request('GET', `${S}/not-a-uuid`)).body.errorDetails.fields?.[0]?.field).toBe('id');
    expect((await api.request('GET', S)).body.errorDetails.fields?.[0]?.field).toBe('project_id');
    expect((await api.request('PATCH', `${S}/${schema.id}`, {})).status).toBe(400);
    for (const [method, path, body] of [
      ['GET', `${S}/${randomUUID()}`, undefined],
      ['PATCH', `${S}/${randomUUID()}`, { name: 'x' }],
      ['DELETE', `${S}/${randomUUID()}`, undefined],
      ['GET', `${S}?project_id=${randomUUID()}`, undefined],
      ['POST', `${S}?project_id=${randomUUID()}`, { name: 'x', schema: {} }],
      ['GET', `${S}/${schema.id}?project_id=${other.id}`, undefined],
      ['PATCH', `${S}/${schema.id}?project_id=${other.id}`, { name: 'stolen' }],
      ['DELETE', `${S}/${schema.id}?project_id=${other.id}`, undefined],
    ] as const) {
      const res = await api.request(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toMatchObject({ error: true, message: 'Not found', status: 404 });
    }
    expect((await api.request<SchemaData>('GET', `${S}/${schema.id}`)).body.data.name).toBe(schema.name);
  });

  it('answers duplicate names with 409, on create and on rename', async () => {
    const project = await createProject(api);
    const a = await createSchema(api, project.id);
    const b = await createSchema(api, project.id);
    const dup = await api.request('POST', `${S}?project_id=${project.id}`, { name: a.name, schema: {} });
    expect(dup.status).toBe(409);
    expect(dup.body.errorDetails).toMatchObject({ field: 'name' });
    expect((await api.request('PATCH', `${S}/${b.id}`, { name: a.name })).status).toBe(409);
    expect((await listOf(project.id)).length).toBe(2);
    const elsewhere = await createProject(api);
    expect((await createSchema(api, elsewhere.id, { name: a.name })).name).toBe(a.name);
  });

  it('answers random bodies with the envelope, never a 5xx, and writes nothing on a 400', async () => {
    const project = await createProject(api);
    const schema = await createSchema(api, project.id);
    const snapshot = async () =>
      JSON.stringify(await db(api)('schemas').where({ project_id: project.id }).orderBy('id').select('*'));
    for (const [method, path] of [
      ['POST', `${S}?project_id=${project.id}`],
      ['PATCH', `${S}/${schema.id}`],
    ] as const) {
      await fc.assert(
        fc.asyncProperty(randomBody(['name', 'description', 'schema']), async (body) => {
          const before = await snapshot();
          const status = expectEnvelope(await api.request(method, path, body));
          if (status === 400) expect(await snapshot()).toBe(before);
        }),
        { numRuns: 50 },
      );
    }
  });

  it('refuses to delete a schema an agent uses, naming the agent', async () => {
    const project = await createProject(api);
    const schema = await createSchema(api, project.id);
    const prompt = await createPrompt(api, project.id);
    const agent = await insertAgent(api, project.id, { prompt_id: prompt.id, schema_id: schema.id });
    const res = await api.request('DELETE', `${S}/${schema.id}`);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: true, message: 'Conflict', status: 409, data: {} });
    expect(res.body.errorDetails).toEqual({
      reason: 'still referenced',
      referenced_by: [{ type: 'agent', id: agent.id, name: agent.name }],
    });
    expect((await api.request('GET', `${S}/${schema.id}`)).status).toBe(200);
    await db(api)('agents').where({ id: agent.id }).delete();
    expect((await api.request('DELETE', `${S}/${schema.id}`)).status).toBe(200);
  });
});
