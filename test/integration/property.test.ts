/**
 * Property-based: random JSON bodies, path values and query strings against
 * every create/update route of the configuration API. Whatever arrives, the
 * answer is never a 5xx, always the envelope, and a rejected request leaves
 * the whole database exactly as it was. Runs on a database of its own so the
 * fingerprint sees only this test's writes.
 */
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, migrateLatest, type Db } from '../../api/db/knex.js';
import type { RegisteredRoute } from '../../api/http/api-router.js';
import { buildRouters } from '../../api/routes/index.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject } from '../helpers/factories.js';
import { createModel, createProvider, createVirtualKey } from '../helpers/factories/config.js';
import { createConversation, createPrompt, createSchema } from '../helpers/factories/content.js';

const TABLES = [
  'projects',
  'providers',
  'virtual_keys',
  'virtual_key_grants',
  'models',
  'prompts',
  'prompt_versions',
  'prompt_labels',
  'schemas',
  'mcp_servers',
  'agents',
  'agent_mcp_servers',
  'conversations',
  'threads',
  'messages',
];

describe('every create/update route under random input', () => {
  const admin = inject('adminDatabaseUrl')!;
  const dbName = `agent_prop_${Date.now()}_${process.pid}`;
  let db: Db;
  let api: TestApi;
  const ids: Record<string, string[]> = {};
  let promptName = '';
  /** Valid bodies per resource path, taken from the requests that built the fixtures. */
  const examples: Record<string, Record<string, unknown>> = {};
  let conversationId = '';

  beforeAll(async () => {
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    await c.query(`create database ${dbName}`);
    await c.end();
    const u = new URL(admin);
    u.pathname = `/${dbName}`;
    db = createDb(u.toString());
    await migrateLatest(db);
    api = await startTestApi({ DATABASE_URL: u.toString() });

    // One of everything, so random requests also hit existing rows.
    const project = await createProject(api);
    const provider = await createProvider(api);
    const key = await createVirtualKey(api, {
      providers: [{ provider_id: provider.id, model_names: ['*'] }],
    });
    const model = await createModel(api, project.id);
    const prompt = await createPrompt(api, project.id);
    promptName = prompt.name;
    const schema = await createSchema(api, project.id);
    const mcp = await api.request<{ id: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${project.id}`,
      {
        name: 'prop-mcp',
        endpoint: 'http://127.0.0.1:9/mcp',
      },
    );
    const agent = await api.request<{ id: string }>(
      'POST',
      `/api/agent-server/agents?project_id=${project.id}`,
      {
        name: 'prop-agent',
        model_id: model.id,
        prompt_id: prompt.id,
      },
    );
    conversationId = (await createConversation(api, project.id, { id: 'prop-conversation' })).id;
    const base = '/api/agent-server';
    Object.assign(examples, {
      [`${base}/projects`]: { name: 'another-project', description: 'd' },
      [`${base}/providers`]: {
        name: 'another-provider',
        provider_type: 'anthropic',
        base_url: 'http://127.0.0.1:9',
        api_key: 'k-123456789012',
      },
      [`${base}/virtual-keys`]: {
        name: 'another-key',
        providers: [{ provider_id: provider.id, model_names: ['m'] }],
      },
      [`${base}/models`]: {
        name: 'another-model',
        model_id: 'x',
        provider_type: 'openai',
        parameters: { temperature: 1 },
      },
      [`${base}/prompts`]: {
        name: 'another-prompt',
        template: 'Hi {{who}}',
        commit_message: 'c',
        label: 'production',
      },
      [`${base}/prompts/:name/versions`]: {
        template: 'Hello {{who}}',
        commit_message: 'c',
        label: 'production',
      },
      [`${base}/prompts/:name/versions/:version`]: { label: 'production' },
      [`${base}/schemas`]: { name: 'another-schema', schema: { type: 'object' } },
      [`${base}/mcp-servers`]: {
        name: 'another-mcp',
        endpoint: 'http://127.0.0.1:9/mcp',
        headers: { 'X-A': 'b' },
      },
      [`${base}/agents`]: {
        name: 'another-agent',
        model_id: model.id,
        prompt_id: prompt.id,
        max_iterations: 3,
      },
      [`${base}/conversations`]: { id: 'another-conversation', namespace: 'ns', context: { who: 'x' } },
    });
    Object.assign(ids, {
      project: [project.id],
      any: [
        project.id,
        provider.id,
        key.id,
        model.id,
        prompt.id,
        schema.id,
        mcp.body.data.id,
        agent.body.data.id,
      ],
    });
  });

  afterAll(async () => {
    await api?.close();
    await db?.destroy();
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    await c.query(`drop database if exists ${dbName} with (force)`);
    await c.end();
  });

  async function fingerprint(): Promise<string> {
    const parts = await Promise.all(
      TABLES.map(async (t) => {
        const r: { rows: Array<{ h: string }> } = await db.raw(
          `select md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as h from ${t} x`,
        );
        return `${t}:${r.rows[0]!.h}`;
      }),
    );
    return parts.join(',');
  }

  const uuidish = () =>
    fc.oneof(
      fc.constantFrom(...ids.any!),
      fc.uuid(),
      fc.string({ maxLength: 40 }),
      fc.constantFrom('', '%00', '..%2F..', '0'),
    );

  function pathArb(route: RegisteredRoute) {
    const names = [...route.fullPath.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
    return fc
      .tuple(
        ...names.map((n) =>
          n === 'id'
            ? uuidish()
            : n === 'name'
              ? fc.oneof(fc.constant(promptName), fc.string({ maxLength: 30 }))
              : n === 'version'
                ? fc.oneof(fc.constantFrom('1', '2', '0', '-1', '1.5', 'x'), fc.string({ maxLength: 5 }))
                : fc.oneof(fc.constant(conversationId), fc.string({ maxLength: 30 })),
        ),
      )
      .map((values) => {
        let p = route.fullPath;
        names.forEach((n, i) => (p = p.replace(`:${n}`, encodeURIComponent(values[i]!) || 'x')));
        return p;
      });
  }

  const queryArb = () =>
    fc
      .record(
        {
          project_id: fc.oneof(fc.constantFrom(...(ids.project ?? ['x'])), uuidish()),
          extra: fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.string({ maxLength: 10 }), {
            maxKeys: 2,
          }),
        },
        { requiredKeys: [] },
      )
      .map(({ project_id, extra }) => {
        const q = new URLSearchParams(extra ?? {});
        if (project_id !== undefined) q.set('project_id', project_id);
        return q.toString() ? `?${q.toString()}` : '';
      });

  function bodyArb(route: RegisteredRoute) {
    const described = route.request?.body?.describe() as { keys?: Record<string, unknown> } | undefined;
    const keys = Object.keys(described?.keys ?? {});
    const known = keys.length
      ? fc.dictionary(fc.constantFrom(...keys), fc.jsonValue({ maxDepth: 2 }), { maxKeys: keys.length })
      : fc.object();
    const random = fc.oneof(
      known,
      fc.jsonValue({ maxDepth: 3 }),
      fc.constantFrom('{"broken": ', 'null', '[]', '""'),
    );
    const example = examples[route.fullPath] ?? examples[route.fullPath.replace(/\/:id$/, '')];
    if (!example) return random;
    // A valid body, then mutated: keys dropped, values replaced, keys added.
    const exampleKeys = Object.keys(example);
    const mutated = fc
      .record({
        keep: fc.subarray(exampleKeys),
        replace: fc.dictionary(fc.constantFrom(...exampleKeys), fc.jsonValue({ maxDepth: 2 }), {
          maxKeys: 2,
        }),
        add: fc.dictionary(fc.constantFrom(...keys, 'unknown_field'), fc.jsonValue({ maxDepth: 1 }), {
          maxKeys: 1,
        }),
        unique: fc.integer({ min: 0, max: 1_000_000 }),
      })
      .map(({ keep, replace, add, unique }) => {
        const body: Record<string, unknown> = Object.fromEntries(
          keep.map((k): [string, unknown] => [k, example[k]]),
        );
        if (typeof body.name === 'string') body.name = `${body.name}-${unique}`;
        return { ...body, ...replace, ...add };
      });
    return fc.oneof(
      { arbitrary: mutated, weight: 3 },
      { arbitrary: fc.constant(example), weight: 1 },
      { arbitrary: random, weight: 2 },
    );
  }

  it('never answers 5xx, always the envelope, and a rejection writes nothing', async () => {
    const routes = buildRouters(api.server.deps)
      .flatMap((r) => r.routes)
      .filter((r) => ['post', 'patch', 'put'].includes(r.method) && r.request?.body);
    expect(routes.length).toBeGreaterThanOrEqual(12);
    const seen = new Map<number, number>();
    for (const route of routes) {
      await fc.assert(
        fc.asyncProperty(pathArb(route), queryArb(), bodyArb(route), async (path, query, body) => {
          const before = await fingerprint();
          const res = await api.request(route.method.toUpperCase(), `${path}${query}`, body);
          seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
          const where = `${route.method} ${path}${query} ${JSON.stringify(body).slice(0, 200)} → ${res.status} ${res.text.slice(0, 300)}`;
          expect(res.status, where).toBeLessThan(500);
          expect(res.body, where).toMatchObject({ error: res.status !== 200, status: res.status });
          expect(typeof res.body.message, where).toBe('string');
          expect(typeof res.body.data, where).toBe('object');
          expect(typeof res.body.errorDetails, where).toBe('object');
          if (res.status >= 400) expect(await fingerprint(), where).toBe(before);
        }),
        { numRuns: 40 },
      );
    }
    // The inputs reached both validation and lookups (and sometimes succeeded), not just one early exit.
    expect([...seen.keys()]).toEqual(expect.arrayContaining([200, 400, 404, 409]));
    console.info('statuses seen:', Object.fromEntries(seen));
  });
});
