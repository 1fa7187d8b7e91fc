/**
 * The Agent Protocol's store through the official client
 * (`@langchain/langgraph-sdk`'s `client.store`), against the real API and
 * PostgreSQL: items put, read, replaced and deleted; search by namespace
 * prefix, filter and page; namespaces; TTL expiry and refresh; semantic
 * search ranked by a store embedding model served by the scripted vendor
 * (bag-of-words vectors) and metered on the project's virtual key; the text
 * match without one; bad input answered 422 naming the field.
 */
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import { MemoryStoreRepository } from '../../../core/repositories/memory-store.repository.js';
import { startOpenAiVendor } from '../../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../../fixtures/vendors/scripted-server.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { createModel, createProvider, createVirtualKey } from '../../helpers/factories/config.js';
import { createProject } from '../../helpers/factories.js';
import { databaseUrl } from '../../helpers/services.js';

interface HttpError {
  status: number;
  message: string;
}

/** The client's error for a refused call (it throws `HTTP <status>: <body>`). */
async function refusal(call: Promise<unknown>): Promise<HttpError> {
  const err = (await call.then(
    () => undefined,
    (e: unknown) => e,
  )) as HttpError | undefined;
  if (!err) throw new Error('the call succeeded');
  return err;
}

describe('Agent Protocol store', () => {
  let api: TestApi;
  let vendor: ScriptedVendor;
  let db: Db;
  let repo: MemoryStoreRepository;
  /** A project without a store embedding model. */
  let plainId: string;
  let plain: Client;
  const clientOf = (projectId: string) =>
    new Client({ apiUrl: `${api.url}/api/langgraph/${projectId}`, callerOptions: { maxRetries: 0 } });
  const raw = (projectId: string, method: string, path: string, body?: unknown) =>
    fetch(`${api.url}/api/langgraph/${projectId}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });

  beforeAll(async () => {
    api = await startTestApi();
    vendor = await startOpenAiVendor();
    db = createDb(databaseUrl());
    repo = new MemoryStoreRepository(db);
    plainId = (await createProject(api)).id;
    plain = clientOf(plainId);
  });
  afterAll(async () => {
    await api?.close();
    await vendor?.close();
    await db?.destroy();
  });

  it('puts, gets, replaces and deletes an item', async () => {
    await plain.store.putItem(['users', 'u1'], 'prefs', { theme: 'dark' });
    const first = await plain.store.getItem(['users', 'u1'], 'prefs');
    expect(first).toMatchObject({ namespace: ['users', 'u1'], key: 'prefs', value: { theme: 'dark' } });
    expect(Date.parse(first!.createdAt)).not.toBeNaN();

    await plain.store.putItem(['users', 'u1'], 'prefs', { theme: 'light', font: 'mono' });
    const second = await plain.store.getItem(['users', 'u1'], 'prefs');
    expect(second?.value).toEqual({ theme: 'light', font: 'mono' });
    expect(second?.createdAt).toBe(first?.createdAt);
    expect(Date.parse(second!.updatedAt)).toBeGreaterThanOrEqual(Date.parse(first!.updatedAt));

    // Another project's store is another store.
    const other = clientOf((await createProject(api)).id);
    expect(await other.store.getItem(['users', 'u1'], 'prefs')).toBeNull();

    await plain.store.deleteItem(['users', 'u1'], 'prefs');
    expect(await plain.store.getItem(['users', 'u1'], 'prefs')).toBeNull();
    // Deleting what is not there is not an error.
    await plain.store.deleteItem(['users', 'u1'], 'prefs');
  });

  it('searches under a namespace prefix with filters, limit and offset', async () => {
    await Promise.all([
      plain.store.putItem(['docs', 'a'], 'one', { kind: 'note', n: 1, tags: ['x'] }),
      plain.store.putItem(['docs', 'a'], 'two', { kind: 'todo', n: 2 }),
      plain.store.putItem(['docs', 'b'], 'three', { kind: 'note', n: 3 }),
      plain.store.putItem(['other'], 'four', { kind: 'note', n: 4 }),
    ]);
    const keys = async (prefix: string[], options: Parameters<Client['store']['searchItems']>[1] = {}) =>
      (await plain.store.searchItems(prefix, options)).items.map((i) => i.key).sort();

    expect(await keys(['docs'])).toEqual(['one', 'three', 'two']);
    expect(await keys(['docs', 'a'])).toEqual(['one', 'two']);
    expect(await keys(['docs'], { filter: { kind: 'note' } })).toEqual(['one', 'three']);
    expect(await keys(['docs'], { filter: { n: { $gte: 2 } } })).toEqual(['three', 'two']);
    expect(await keys(['docs'], { filter: { kind: { $ne: 'note' } } })).toEqual(['two']);
    expect(await keys(['docs'], { filter: { n: { $in: [1, 3] } } })).toEqual(['one', 'three']);
    expect(await keys(['docs'], { filter: { tags: ['x'] } })).toEqual(['one']);
    expect(await keys([], { filter: { n: 4 } })).toEqual(['four']);

    const page1 = await plain.store.searchItems(['docs'], { limit: 2 });
    const page2 = await plain.store.searchItems(['docs'], { limit: 2, offset: 2 });
    expect(page1.items).toHaveLength(2);
    expect(page2.items).toHaveLength(1);
    expect(new Set([...page1.items, ...page2.items].map((i) => i.key)).size).toBe(3);
    expect(Array.isArray(page1.items[0]?.namespace)).toBe(true);
  });

  it('lists namespaces by prefix, suffix (with wildcards) and depth', async () => {
    const p = clientOf((await createProject(api)).id);
    await Promise.all([
      p.store.putItem(['app', 'users', 'u1'], 'k', { v: 1 }),
      p.store.putItem(['app', 'users', 'u2'], 'k', { v: 1 }),
      p.store.putItem(['app', 'teams', 't1'], 'k', { v: 1 }),
      p.store.putItem(['misc'], 'k', { v: 1 }),
    ]);
    const all = await p.store.listNamespaces();
    expect(all.namespaces).toEqual([
      ['app', 'teams', 't1'],
      ['app', 'users', 'u1'],
      ['app', 'users', 'u2'],
      ['misc'],
    ]);
    expect((await p.store.listNamespaces({ prefix: ['app', 'users'] })).namespaces).toEqual([
      ['app', 'users', 'u1'],
      ['app', 'users', 'u2'],
    ]);
    expect((await p.store.listNamespaces({ suffix: ['t1'] })).namespaces).toEqual([['app', 'teams', 't1']]);
    expect((await p.store.listNamespaces({ prefix: ['app', '*', 'u2'] })).namespaces).toEqual([
      ['app', 'users', 'u2'],
    ]);
    expect((await p.store.listNamespaces({ maxDepth: 2 })).namespaces).toEqual([
      ['app', 'teams'],
      ['app', 'users'],
      ['misc'],
    ]);
    expect((await p.store.listNamespaces({ limit: 1, offset: 1 })).namespaces).toEqual([
      ['app', 'users', 'u1'],
    ]);
  });

  it('expires items at once, refreshes a TTL on read, and housekeeping deletes the expired', async () => {
    const projectId = (await createProject(api)).id;
    const p = clientOf(projectId);
    await p.store.putItem(['session'], 'short', { note: 'soon gone' }, { ttl: 1 });
    await p.store.putItem(['session'], 'kept', { note: 'stays' });
    expect(await p.store.getItem(['session'], 'short')).not.toBeNull();

    await repo.setExpiry(projectId, ['session'], 'short', new Date(Date.now() - 1000));
    expect(await p.store.getItem(['session'], 'short')).toBeNull();
    expect((await p.store.searchItems(['session'])).items.map((i) => i.key)).toEqual(['kept']);
    await repo.setExpiry(projectId, ['session'], 'kept', new Date(Date.now() - 1000));
    expect((await p.store.listNamespaces()).namespaces).toEqual([]);

    expect(await repo.pruneExpired()).toBeGreaterThanOrEqual(2);
    expect(await db('store_items').where({ project_id: projectId }).first()).toBeUndefined();

    // A read that refreshes pushes the expiry a whole TTL ahead again; one that does not leaves it.
    await p.store.putItem(['session'], 'refresh', { note: 'touched' }, { ttl: 10 });
    const soon = new Date(Date.now() + 60_000);
    await repo.setExpiry(projectId, ['session'], 'refresh', soon);
    const expiry = async () =>
      (await db('store_items').where({ project_id: projectId, key: 'refresh' }).first('expires_at'))!
        .expires_at!;
    await p.store.getItem(['session'], 'refresh', { refreshTtl: false });
    expect((await expiry()).getTime()).toBe(soon.getTime());
    await p.store.getItem(['session'], 'refresh');
    expect((await expiry()).getTime()).toBeGreaterThan(Date.now() + 5 * 60_000);
    await repo.setExpiry(projectId, ['session'], 'refresh', soon);
    await p.store.searchItems(['session'], { refreshTtl: true });
    expect((await expiry()).getTime()).toBeGreaterThan(Date.now() + 5 * 60_000);
  });

  it('without an embedding model a query matches text in the values, case-insensitively', async () => {
    const p = clientOf((await createProject(api)).id);
    await p.store.putItem(['notes'], 'a', { text: 'The Cat sat on the mat' });
    await p.store.putItem(['notes'], 'b', { text: 'stock prices fell', meta: { who: 'a cat person' } });
    await p.store.putItem(['notes'], 'c', { text: 'nothing here', cat: 'key names do not count' });
    await p.store.putItem(['notes'], 'd', { text: '100% sure' });
    const found = await p.store.searchItems(['notes'], { query: 'CAT' });
    expect(found.items.map((i) => i.key).sort()).toEqual(['a', 'b']);
    expect(found.items.every((i) => (i as { score?: unknown }).score === null)).toBe(true);
    // LIKE's wildcards are taken literally.
    expect((await p.store.searchItems(['notes'], { query: '0%' })).items.map((i) => i.key)).toEqual(['d']);
  });

  describe('with a store embedding model', () => {
    let projectId: string;
    let keyId: string;
    let p: Client;

    beforeAll(async () => {
      projectId = (await createProject(api)).id;
      const provider = await createProvider(api, { provider_type: 'openai', base_url: `${vendor.url}/v1` });
      const model = await createModel(api, projectId, { provider_id: provider.id, model_id: 'bow-embed' });
      const key = await createVirtualKey(api, {
        providers: [{ provider_id: provider.id, model_names: ['bow-embed'] }],
      });
      keyId = key.id;
      const set = await api.request<{ store_embedding: unknown }>(
        'PATCH',
        `/api/agent-server/projects/${projectId}`,
        {
          virtual_key_id: key.id,
          store_embedding: { model_id: model.id, dims: 256, fields: ['text'] },
        },
      );
      expect(set.status).toBe(200);
      expect(set.body.data.store_embedding).toEqual({ model_id: model.id, dims: 256, fields: ['text'] });
      const shown = await api.request<{ store_embedding: unknown }>(
        'GET',
        `/api/agent-server/projects/${projectId}`,
      );
      expect(shown.body.data.store_embedding).toEqual({ model_id: model.id, dims: 256, fields: ['text'] });
      p = clientOf(projectId);
    });

    it('ranks by cosine similarity to the query, scored, metered on the project key', async () => {
      await p.store.putItem(['kb'], 'pets', { text: 'my cat likes fish and naps', id: 1 });
      await p.store.putItem(['kb'], 'mat', { text: 'the cat sat on the mat', id: 2 });
      await p.store.putItem(['kb'], 'stocks', { text: 'stock market prices fell today', id: 3 });
      // Indexed by another field than the project default: its title.
      await p.store.putItem(
        ['kb'],
        'title',
        { title: 'fish recipes', text: 'unrelated words' },
        { index: ['title'] },
      );
      // Not indexed: found, never scored, after the scored ones.
      await p.store.putItem(['kb'], 'plain', { text: 'cat fish' }, { index: false });

      const res = await p.store.searchItems(['kb'], { query: 'cat fish', limit: 10 });
      const ranked = res.items as Array<{ key: string; score: number | null }>;
      expect(ranked.map((i) => i.key)).toEqual(['pets', 'title', 'mat', 'stocks', 'plain']);
      expect(ranked[0]!.score).toBeGreaterThan(ranked[1]!.score!);
      expect(ranked[1]!.score).toBeGreaterThan(ranked[2]!.score!);
      expect(ranked[3]!.score).toBe(0);
      expect(ranked[4]!.score).toBeNull();

      // Filters and prefixes apply to semantic search too.
      const filtered = await p.store.searchItems(['kb'], { query: 'cat fish', filter: { id: { $gt: 1 } } });
      expect(filtered.items.map((i) => i.key)).toEqual(['mat', 'stocks']);

      // Each put and each query is one embedding call of the project's model, sent with its dimensions.
      const embeds = vendor.received.filter((r) => r.path === '/v1/embeddings');
      expect(embeds.length).toBeGreaterThanOrEqual(5);
      expect(embeds.every((r) => r.body.model === 'bow-embed' && r.body.dimensions === 256)).toBe(true);
      expect(embeds.map((r) => r.body.input)).toContainEqual(['fish recipes']);

      // Metered on the project's virtual key, like every model call of the project.
      await expect
        .poll(
          async () =>
            Number(
              (
                await db('gateway_usage')
                  .where({ virtual_key_id: keyId, model: 'bow-embed' })
                  .count<[{ count: string }]>()
              )[0]?.count,
            ),
          { timeout: 10_000 },
        )
        .toBeGreaterThanOrEqual(6);
    });

    it('answers 400 when the project key does not grant the embedding model, and stores unindexed items all the same', async () => {
      const denied = await createProject(api);
      const provider = await createProvider(api, { provider_type: 'openai', base_url: `${vendor.url}/v1` });
      const model = await createModel(api, denied.id, { provider_id: provider.id, model_id: 'bow-embed' });
      const key = await createVirtualKey(api, {
        providers: [{ provider_id: provider.id, model_names: ['other'] }],
      });
      await api.request('PATCH', `/api/agent-server/projects/${denied.id}`, {
        virtual_key_id: key.id,
        store_embedding: { model_id: model.id },
      });
      const err = await refusal(clientOf(denied.id).store.putItem(['a'], 'k', { text: 'x' }));
      expect(err.status).toBe(400);
      expect(err.message).toContain('not granted');
      // Not embedded, nothing asked of the key: still stored.
      await clientOf(denied.id).store.putItem(['a'], 'k', { text: 'x' }, { index: false });
      expect(await clientOf(denied.id).store.getItem(['a'], 'k')).not.toBeNull();
    });

    it("answers 429 when the project key's rate limit refuses the embedding call", async () => {
      const limited = await createProject(api);
      const provider = await createProvider(api, { provider_type: 'openai', base_url: `${vendor.url}/v1` });
      const model = await createModel(api, limited.id, { provider_id: provider.id, model_id: 'bow-embed' });
      const key = await createVirtualKey(api, {
        providers: [{ provider_id: provider.id, model_names: ['*'] }],
        rate_limit: { requests_per_minute: 1 },
      });
      await api.request('PATCH', `/api/agent-server/projects/${limited.id}`, {
        virtual_key_id: key.id,
        store_embedding: { model_id: model.id },
      });
      const c = clientOf(limited.id);
      await c.store.putItem(['a'], 'k', { text: 'first call fits' });
      const err = await refusal(c.store.searchItems(['a'], { query: 'second call' }));
      expect(err.status).toBe(429);
      expect(err.message).toContain('requests_per_minute');
    });
  });

  it('refuses a store embedding model of another project, or one that cannot embed (400 naming the field)', async () => {
    const project = await createProject(api);
    const elsewhere = await createModel(api, plainId, { model_id: 'bow-embed' });
    const claude = await createModel(api, project.id, { provider_type: 'anthropic', model_id: 'claude-x' });
    for (const modelId of [elsewhere.id, claude.id]) {
      const res = await api.request('PATCH', `/api/agent-server/projects/${project.id}`, {
        store_embedding: { model_id: modelId },
      });
      expect(res.status).toBe(400);
      expect(res.body.errorDetails.fields?.[0]?.field).toBe('store_embedding.model_id');
    }
    const onCreate = await api.request('POST', '/api/agent-server/projects', {
      name: `p-${Date.now()}`,
      store_embedding: { model_id: elsewhere.id },
    });
    expect(onCreate.status).toBe(400);
    const cleared = await api.request<{ store_embedding: unknown }>(
      'PATCH',
      `/api/agent-server/projects/${project.id}`,
      {
        store_embedding: null,
      },
    );
    expect(cleared.body.data.store_embedding).toBeNull();
  });

  it('answers bad input with 422 naming the field', async () => {
    const fieldsOf = async (res: Response) => {
      expect(res.status).toBe(422);
      const body = (await res.json()) as { detail: Array<{ loc: string[]; msg: string }> };
      return body.detail.map((d) => d.loc.slice(1).join('.'));
    };
    expect(
      await fieldsOf(await raw(plainId, 'PUT', '/store/items', { namespace: ['a.b'], key: 'k', value: {} })),
    ).toEqual(['namespace.0']);
    expect(
      await fieldsOf(
        await raw(plainId, 'PUT', '/store/items', { namespace: ['a', ''], key: 'k', value: {} }),
      ),
    ).toEqual(['namespace.1']);
    expect(
      await fieldsOf(await raw(plainId, 'PUT', '/store/items', { namespace: [], key: 'k', value: 'x' })),
    ).toEqual(['namespace', 'value']);
    expect(
      await fieldsOf(
        await raw(plainId, 'PUT', '/store/items', { namespace: ['a'], key: 'k', value: {}, ttl: -1 }),
      ),
    ).toEqual(['ttl']);
    expect(
      await fieldsOf(
        await raw(plainId, 'POST', '/store/items/search', { namespace_prefix: ['a'], limit: 0 }),
      ),
    ).toEqual(['limit']);
    expect(
      await fieldsOf(await raw(plainId, 'POST', '/store/items/search', { filter: { n: { $near: 1 } } })),
    ).toEqual(['filter.n']);
    expect(await fieldsOf(await raw(plainId, 'GET', '/store/items?namespace=a..b&key=k'))).toEqual([
      'namespace',
    ]);
    expect(await fieldsOf(await raw(plainId, 'DELETE', '/store/items', { namespace: ['a'] }))).toEqual([
      'key',
    ]);
    expect(await fieldsOf(await raw(plainId, 'POST', '/store/namespaces', { max_depth: 0 }))).toEqual([
      'max_depth',
    ]);

    // Through the client too: its error carries our answer.
    const err = await refusal(plain.store.searchItems(['x'], { limit: 5000 }));
    expect(err.status).toBe(422);
    expect(err.message).toContain('limit');
  });

  it('answers 404 for an unknown project, and deleting a project deletes its store', async () => {
    const missing = await refusal(clientOf('00000000-0000-4000-8000-000000000000').store.getItem(['a'], 'k'));
    expect(missing.status).toBe(404);
    expect(missing.message).toContain('Project not found');

    const project = await createProject(api);
    await clientOf(project.id).store.putItem(['a'], 'k', { v: 1 });
    expect((await api.request('DELETE', `/api/agent-server/projects/${project.id}`)).status).toBe(200);
    expect(await db('store_items').where({ project_id: project.id }).first()).toBeUndefined();
  });
});
