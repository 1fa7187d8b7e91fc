/**
 * Property-based: random JSON bodies, path values and query strings against
 * every create/update route of the configuration API. Whatever arrives, the
 * answer is never a 5xx, always the envelope, and a rejected request leaves
 * the whole database exactly as it was. Arbitrary Unicode (NUL, lone
 * surrogates, control and astral characters) goes through every string field,
 * key and query/path value: what Postgres cannot store is a 400 naming the
 * field, what it can is stored as sent. Runs on a database of its own so the
 * fingerprint sees only this test's writes.
 */
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, migrateLatest, type Db } from '../../core/db/knex.js';
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
            : n === 'project_id'
              ? fc.oneof(fc.constant(ids.project![0]!), uuidish())
              : n === 'name'
                ? fc.oneof(fc.constant(promptName), fc.string({ maxLength: 30 }))
                : n === 'version'
                  ? fc.oneof(fc.constantFrom('1', '2', '0', '-1', '1.5', 'x'), fc.string({ maxLength: 5 }))
                  : fc.oneof(fc.constant(conversationId), fc.string({ maxLength: 30 })),
        ),
      )
      .map((values) => {
        let p = route.fullPath;
        // A segment of one or two dots is resolved away by the URL parser (`/versions/.` is
        // `/versions/`), and so is its percent-encoded form (`%2E`, WHATWG URL): such a
        // value cannot reach a route as a segment, so it gets a letter.
        const segment = (v: string) => {
          const encoded = encodeURIComponent(v) || 'x';
          return /^\.+$/.test(encoded) ? `${encoded}x` : encoded;
        };
        names.forEach((n, i) => (p = p.replace(`:${n}`, segment(values[i]!))));
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

  /** One code point of any kind, a NUL or a lone surrogate (fast-check's 'binary' never makes the last two). */
  const hostileUnit = fc.oneof(
    { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), weight: 20 },
    { arbitrary: fc.constant('\u0000'), weight: 1 },
    { arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)), weight: 1 },
  );
  const unicodeString = (minLength = 0) => fc.string({ unit: hostileUnit, minLength, maxLength: 12 });
  /** What Postgres cannot store as sent (text: NUL; jsonb: NUL and lone surrogates). */
  const unstorable = (s: string) => s.includes('\u0000') || !s.isWellFormed();

  /** Free-form JSON fields: any key goes, and what is accepted is stored as sent. */
  const FREE_FORM = new Set(['parameters', 'context', 'headers', 'schema']);

  /**
   * Every string field of a route: the string leaves of its example body, its
   * top-level keys that joi types as strings, and a new key under each
   * free-form object.
   */
  function stringPaths(route: RegisteredRoute, example: Record<string, unknown>): string[][] {
    const paths: string[][] = [];
    const walk = (v: unknown, path: string[]) => {
      if (typeof v === 'string') paths.push(path);
      else if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, String(i)]));
      else if (v && typeof v === 'object') {
        if (FREE_FORM.has(path[0]!)) paths.push([...path, 'x']);
        for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
      }
    };
    walk(example, []);
    const described = route.request?.body?.describe() as
      { keys?: Record<string, { type: string }> } | undefined;
    for (const [k, d] of Object.entries(described?.keys ?? {}))
      if (d.type === 'string' && !paths.some((p) => p.length === 1 && p[0] === k)) paths.push([k]);
    return paths;
  }

  function setAt(body: Record<string, unknown>, path: string[], value: unknown): Record<string, unknown> {
    const copy = structuredClone(body);
    let at = copy;
    for (const k of path.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
    at[path.at(-1)!] = value;
    return copy;
  }

  const getAt = (v: unknown, path: string[]) =>
    path.reduce<unknown>(
      (at, k) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[k] : undefined),
      v,
    );

  /** Percent-encodes every byte of the string's UTF-8 (a lone surrogate is sent as U+FFFD: URLs carry UTF-8). */
  const encodeAll = (s: string) =>
    [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

  /** The MCP server and A2A doors answer JSON-RPC, errors included. */
  const speaksJsonRpc = (route: RegisteredRoute) => /^\/api\/(mcp|a2a)\//.test(route.fullPath);

  /**
   * Each door's own shape: the envelope on the configuration API, `{detail}`
   * on the Agent Protocol's errors (its answers are the protocol's objects),
   * a JSON-RPC error object on the MCP and A2A doors.
   */
  function expectShape(route: RegisteredRoute, res: { status: number; body: unknown }, where: string) {
    if (speaksJsonRpc(route)) {
      if (res.status >= 400) {
        const body = res.body as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown } };
        expect(body.jsonrpc, where).toBe('2.0');
        expect(typeof body.error?.code, where).toBe('number');
        expect(typeof body.error?.message, where).toBe('string');
      }
      return;
    }
    if (route.raw) {
      if (res.status >= 400) expect(res.body, where).toHaveProperty('detail');
      return;
    }
    expect(res.body, where).toMatchObject({ error: res.status !== 200, status: res.status });
    const body = res.body as { message: unknown; data: unknown; errorDetails: unknown };
    expect(typeof body.message, where).toBe('string');
    expect(typeof body.data, where).toBe('object');
    expect(typeof body.errorDetails, where).toBe('object');
  }

  /** Routes whose answer depends on a remote server (an MCP server's authorization, an inspect). */
  const REACHES_REMOTE = /\/(authorize|inspect)$/;

  it("never answers 5xx, always its door's shape, and a rejection writes nothing", async () => {
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
          // Routes that reach the remote the row names (the fixtures' addresses answer nothing) may say so: 502.
          if (res.status === 502 && REACHES_REMOTE.test(route.fullPath))
            expect(JSON.stringify(res.body), where).toMatch(/"reason":"[^"]+"/);
          else expect(res.status, where).toBeLessThan(500);
          expectShape(route, res, where);
          if (res.status >= 400) expect(await fingerprint(), where).toBe(before);
        }),
        { numRuns: 40 },
      );
    }
    // The inputs reached both validation and lookups (and sometimes succeeded), not just one early exit.
    expect([...seen.keys()]).toEqual(expect.arrayContaining([200, 400, 404, 409]));
    console.info('statuses seen:', Object.fromEntries(seen));
  });

  it('arbitrary Unicode in every string field and key of a body: a 400 naming it when unstorable, else stored as sent', async () => {
    const routes = buildRouters(api.server.deps)
      .flatMap((r) => r.routes)
      .filter((r) => ['post', 'patch', 'put'].includes(r.method) && r.request?.body);
    const seen = { refused: 0, storedAsSent: 0 };
    let covered = 0;
    for (const route of routes) {
      const example = examples[route.fullPath] ?? examples[route.fullPath.replace(/\/:id$/, '')];
      if (!example) continue;
      covered++;
      const paths = stringPaths(route, example);
      await fc.assert(
        fc.asyncProperty(
          pathArb(route),
          fc.constantFrom(...paths),
          unicodeString(),
          fc.boolean(),
          fc.integer({ min: 0, max: 1_000_000 }),
          async (path, field, text, asKey, unique) => {
            // Under a free-form object the string may be a key instead of a value.
            const keyed = asKey && FREE_FORM.has(field[0]!) && field.length > 1;
            // Fresh names and ids, so a clean string is not refused as a duplicate.
            let body = { ...example };
            for (const k of ['name', 'id'])
              if (typeof example[k] === 'string') body[k] = `${example[k]}-${unique}`;
            body = keyed ? setAt(body, field.slice(0, -1), { [text]: 'v' }) : setAt(body, field, text);
            const named = keyed ? field.slice(0, -1).join('.') : field.join('.');
            const query = route.fullPath.includes(':') ? '' : `?project_id=${ids.project![0]}`;
            const before = await fingerprint();
            const res = await api.request(route.method.toUpperCase(), `${path}${query}`, body);
            const where = `${route.method} ${path} ${named}=${JSON.stringify(text)}${keyed ? ' (key)' : ''} → ${res.status} ${res.text.slice(0, 300)}`;
            expect(res.status, where).toBeLessThan(500);
            expect(res.body, where).toMatchObject({ error: res.status !== 200, status: res.status });
            if (res.status >= 400) expect(await fingerprint(), where).toBe(before);
            if (unstorable(text)) {
              seen.refused++;
              expect(res.status, where).toBe(400);
              const fields = (res.body.errorDetails.fields ?? []).filter((f) => f.field === named);
              expect(
                fields.map((f) => f.type),
                where,
              ).toEqual([expect.stringMatching(/^string\.(nul|surrogate)$/)]);
            } else if (res.status === 200 && !keyed && FREE_FORM.has(field[0]!) && field[0] !== 'headers') {
              // Free-form JSON comes back exactly as sent, whatever the characters.
              seen.storedAsSent++;
              expect(getAt(res.body.data, field), where).toBe(text);
            }
          },
        ),
        { numRuns: 40 },
      );
    }
    expect(covered).toBeGreaterThanOrEqual(10);
    expect(seen.refused).toBeGreaterThan(0);
    expect(seen.storedAsSent).toBeGreaterThan(0);
    console.info('unicode in bodies:', seen);
  });

  it('arbitrary Unicode in every query and path value: a 400 naming it when it holds a NUL, never a 5xx', async () => {
    const routes = buildRouters(api.server.deps)
      .flatMap((r) => r.routes)
      .filter(
        (r) => ['get', 'delete'].includes(r.method) && !r.produces && (r.request?.query || r.request?.params),
      );
    expect(routes.length).toBeGreaterThanOrEqual(20);
    let refused = 0;
    for (const route of routes) {
      const params = [...route.fullPath.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
      const described = route.request?.query?.describe() as { keys?: Record<string, unknown> } | undefined;
      const queryKeys = Object.keys(described?.keys ?? {});
      const targets = [
        ...params.map((n) => ['params', n] as const),
        ...queryKeys.map((k) => ['query', k] as const),
      ];
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...targets), unicodeString(1), async ([where, name], text) => {
          let path = route.fullPath;
          for (const n of params)
            path = path.replace(`:${n}`, n === name && where === 'params' ? encodeAll(text) : 'x');
          const query = where === 'query' ? `?${encodeURIComponent(name)}=${encodeAll(text)}` : '';
          const res = await api.request(route.method.toUpperCase(), `${path}${query}`);
          const what = `${route.method} ${path}${query} → ${res.status} ${res.text.slice(0, 300)}`;
          expect(res.status, what).toBeLessThan(500);
          expectShape(route, res, what);
          // A lone surrogate cannot travel in a URL (it arrives as U+FFFD); a NUL can.
          if (text.includes('\u0000')) {
            refused++;
            if (speaksJsonRpc(route)) {
              // JSON-RPC's doors: a 400 whose error message names the value.
              expect(res.status, what).toBe(400);
              expect((res.body as unknown as { error: { message: string } }).error.message, what).toContain(
                name,
              );
            } else if (route.raw) {
              // The Agent Protocol refuses input with FastAPI's 422 and the field's place.
              expect(res.status, what).toBe(422);
              const detail = (res.body as unknown as { detail: Array<{ loc: string[] }> }).detail;
              expect(
                detail.map((d) => d.loc.at(-1)),
                what,
              ).toContain(name);
            } else {
              expect(res.status, what).toBe(400);
              expect(
                res.body.errorDetails.fields?.map((f) => f.field),
                what,
              ).toContain(name);
            }
          }
        }),
        { numRuns: 15 },
      );
    }
    expect(refused).toBeGreaterThan(0);
  });
});
