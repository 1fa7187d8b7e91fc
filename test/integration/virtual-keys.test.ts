import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findVirtualKeyBySecret } from '../../api/services/virtual-keys.service.js';
import { startTestApi, type HttpResult, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName, type ProjectData } from '../helpers/factories.js';
import {
  VIRTUAL_KEYS,
  createProvider,
  createVirtualKey,
  type VirtualKeyData,
} from '../helpers/factories/config.js';

const future = () => new Date(Date.now() + 86_400_000).toISOString();

describe('Virtual keys API over real HTTP and Postgres', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api.close();
  });

  const keyRow = async (name: string) => api.server.deps.db('virtual_keys').where({ name }).first();

  it('creates, reads, lists, updates and deletes a key; the secret appears only in the create response', async () => {
    const a = await createProvider(api);
    const b = await createProvider(api, { provider_type: 'anthropic' });
    const name = uniqueName('vk');
    const expiresAt = future();
    const created = await api.request<VirtualKeyData>('POST', VIRTUAL_KEYS, {
      name,
      providers: [
        { provider_id: b.id, model_names: ['claude-sonnet-4', 'claude-haiku-4'] },
        { provider_id: a.id, model_names: ['*'] },
      ],
      expires_at: expiresAt,
      rate_limit: { requests_per_minute: 60 },
      budget: { max_usd: 12.5, period: 'month' },
      fallbacks: [`${a.name}/gpt-4o-mini`],
    });
    expect(created.status).toBe(200);
    const key = created.body.data;
    expect(key.secret_key).toMatch(/^sk-vk-[A-Za-z0-9_-]{43}$/);
    expect(key).toMatchObject({
      name,
      key_prefix: key.secret_key!.slice(0, 10),
      providers: [
        { provider_id: b.id, model_names: ['claude-sonnet-4', 'claude-haiku-4'] },
        { provider_id: a.id, model_names: ['*'] },
      ],
      expires_at: expiresAt,
      rate_limit: { requests_per_minute: 60 },
      budget: { max_usd: 12.5, period: 'month' },
      fallbacks: [`${a.name}/gpt-4o-mini`],
    });

    const got = await api.request<VirtualKeyData>('GET', `${VIRTUAL_KEYS}/${key.id}`);
    const { secret_key: _secret, ...withoutSecret } = key;
    expect(got.body.data).toEqual(withoutSecret);
    const list = await api.request<VirtualKeyData[]>('GET', `${VIRTUAL_KEYS}?limit=200`);
    const listed = list.body.data.find((k) => k.id === key.id);
    expect(listed).toEqual(withoutSecret);
    expect(list.text).not.toContain(key.secret_key);

    const patched = await api.request<VirtualKeyData>('PATCH', `${VIRTUAL_KEYS}/${key.id}`, {
      providers: [{ provider_id: a.id, model_names: ['gpt-4o'] }],
      expires_at: null,
      budget: null,
      rate_limit: { tokens_per_minute: 10_000 },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      id: key.id,
      name,
      key_prefix: key.key_prefix,
      providers: [{ provider_id: a.id, model_names: ['gpt-4o'] }],
      expires_at: null,
      budget: null,
      rate_limit: { tokens_per_minute: 10_000 },
      fallbacks: [`${a.name}/gpt-4o-mini`],
    });
    expect(patched.body.data).not.toHaveProperty('secret_key');

    const deleted = await api.request('DELETE', `${VIRTUAL_KEYS}/${key.id}`);
    expect(deleted.body).toEqual({ error: false, message: 'OK', data: {}, status: 200, errorDetails: {} });
    expect((await api.request('GET', `${VIRTUAL_KEYS}/${key.id}`)).status).toBe(404);
    expect((await api.request('DELETE', `${VIRTUAL_KEYS}/${key.id}`)).status).toBe(404);
    const after = await api.request<VirtualKeyData[]>('GET', `${VIRTUAL_KEYS}?limit=200`);
    expect(after.body.data.map((k) => k.id)).not.toContain(key.id);
    expect(await findVirtualKeyBySecret(api.server.deps.db, key.secret_key!)).toBeUndefined();
    expect(await api.server.deps.db('virtual_key_grants').where({ virtual_key_id: key.id })).toEqual([]);
  });

  it('stores only the SHA-256 of the secret, found again by findVirtualKeyBySecret', async () => {
    const key = await createVirtualKey(api);
    const row = (await api.server.deps.db('virtual_keys').where({ id: key.id }).first())!;
    expect(JSON.stringify(row)).not.toContain(key.secret_key.slice(6));
    expect(row.key_hash).toHaveLength(32);
    const found = await findVirtualKeyBySecret(api.server.deps.db, key.secret_key);
    expect(found).toMatchObject({ id: key.id, name: key.name, providers: key.providers });
    expect(await findVirtualKeyBySecret(api.server.deps.db, `${key.secret_key}x`)).toBeUndefined();
  });

  it('rotation returns a new secret and invalidates the old one', async () => {
    const key = await createVirtualKey(api);
    const rotated = await api.request<VirtualKeyData>('POST', `${VIRTUAL_KEYS}/${key.id}/rotate`);
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.data.secret_key!;
    expect(fresh).toMatch(/^sk-vk-/);
    expect(fresh).not.toBe(key.secret_key);
    expect(rotated.body.data).toMatchObject({
      id: key.id,
      key_prefix: fresh.slice(0, 10),
      providers: key.providers,
    });
    expect(await findVirtualKeyBySecret(api.server.deps.db, key.secret_key)).toBeUndefined();
    expect((await findVirtualKeyBySecret(api.server.deps.db, fresh))?.id).toBe(key.id);
    expect((await api.request('POST', `${VIRTUAL_KEYS}/${randomUUID()}/rotate`)).status).toBe(404);
  });

  it('never returns the secret after creation and never logs it', async () => {
    const ids: string[] = [];
    const responses: HttpResult[] = [];
    const send = async <T>(method: string, path: string, body?: unknown) => {
      const requestId = `vk-secret-${randomUUID()}`;
      ids.push(requestId);
      const res = await api.request<T>(method, path, body, { 'x-request-id': requestId });
      responses.push(res);
      return res;
    };
    const provider = await createProvider(api);
    const created = await send<VirtualKeyData>('POST', VIRTUAL_KEYS, {
      name: uniqueName('vk'),
      providers: [{ provider_id: provider.id, model_names: ['*'] }],
    });
    const { id, secret_key: first } = created.body.data;
    const rotated = await send<VirtualKeyData>('POST', `${VIRTUAL_KEYS}/${id}/rotate`);
    const second = rotated.body.data.secret_key!;
    await send('GET', `${VIRTUAL_KEYS}/${id}`);
    await send('GET', `${VIRTUAL_KEYS}?limit=200`);
    await send('PATCH', `${VIRTUAL_KEYS}/${id}`, { rate_limit: { requests_per_minute: 5 } });
    // A secret pasted into a body where it does not belong is neither echoed nor logged.
    await send('PATCH', `${VIRTUAL_KEYS}/${id}`, { secret_key: second });

    for (const requestId of ids) expect(api.logs.text).toContain(requestId);
    const later = responses.slice(2);
    for (const res of later) for (const s of [first!, second]) expect(res.text).not.toContain(s);
    expect(responses[1]!.text).not.toContain(first);
    for (const s of [first!, second]) expect(api.logs.text).not.toContain(s);
  });

  it.each([
    ['unknown field', { colour: 'red' }, ['colour']],
    ['missing providers', { providers: undefined }, ['providers']],
    ['over-long name', { name: 'x'.repeat(201) }, ['name']],
    [
      'malformed provider_id',
      { providers: [{ provider_id: 'nope', model_names: ['*'] }] },
      ['providers.0.provider_id'],
    ],
    ['empty model_names', 'EMPTY_MODELS', ['providers.0.model_names']],
    ['empty model name', 'EMPTY_MODEL_NAME', ['providers.0.model_names.0']],
    ['wrong types', { name: 7, fallbacks: 'x' }, ['name', 'fallbacks']],
    [
      'negative rate limit and budget',
      { rate_limit: { requests_per_minute: -1 }, budget: { max_usd: -5, period: 'day' } },
      ['rate_limit.requests_per_minute', 'budget.max_usd'],
    ],
    ['unknown budget period', { budget: { max_usd: 1, period: 'year' } }, ['budget.period']],
    ['past expires_at', { expires_at: '2001-01-01T00:00:00.000Z' }, ['expires_at']],
    ['malformed fallback', { fallbacks: ['no-slash'] }, ['fallbacks.0']],
  ])('rejects %s with 400 naming each field, and writes nothing', async (_label, patch, fields) => {
    const provider = await createProvider(api);
    const name = uniqueName('vk');
    const grants = [{ provider_id: provider.id, model_names: ['*'] }];
    const extra =
      patch === 'EMPTY_MODELS'
        ? { providers: [{ provider_id: provider.id, model_names: [] }] }
        : patch === 'EMPTY_MODEL_NAME'
          ? { providers: [{ provider_id: provider.id, model_names: [''] }] }
          : (patch as Record<string, unknown>);
    const res = await api.request('POST', VIRTUAL_KEYS, { name, providers: grants, ...extra });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: true, message: 'Invalid request', status: 400, data: {} });
    const named = res.body.errorDetails.fields?.map((f) => f.field);
    for (const field of fields) expect(named).toContain(field);
    expect(await keyRow(name)).toBeUndefined();
  });

  it('rejects grants and fallbacks naming unknown providers with 400 naming each, writing nothing', async () => {
    const known = await createProvider(api);
    const name = uniqueName('vk');
    const res = await api.request('POST', VIRTUAL_KEYS, {
      name,
      providers: [
        { provider_id: known.id, model_names: ['*'] },
        { provider_id: randomUUID(), model_names: ['*'] },
      ],
      fallbacks: [`${known.name}/gpt-4o`, 'no-such-provider-zz/gpt-4o'],
    });
    expect(res.status).toBe(400);
    expect(res.body.errorDetails.fields?.map((f) => f.field).sort()).toEqual([
      'fallbacks.1',
      'providers.1.provider_id',
    ]);
    expect(await keyRow(name)).toBeUndefined();

    const dup = await api.request('POST', VIRTUAL_KEYS, {
      name,
      providers: [
        { provider_id: known.id, model_names: ['a'] },
        { provider_id: known.id, model_names: ['b'] },
      ],
    });
    expect(dup.status).toBe(400);
    expect(dup.body.errorDetails.fields?.[0]?.field).toBe('providers.1');
  });

  it('leaves key and grants untouched when a PATCH fails', async () => {
    const key = await createVirtualKey(api);
    const before = (await api.request<VirtualKeyData>('GET', `${VIRTUAL_KEYS}/${key.id}`)).body.data;
    const bad = await api.request('PATCH', `${VIRTUAL_KEYS}/${key.id}`, {
      name: uniqueName('renamed'),
      providers: [{ provider_id: randomUUID(), model_names: ['*'] }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errorDetails.fields?.[0]?.field).toBe('providers.0.provider_id');
    expect((await api.request('PATCH', `${VIRTUAL_KEYS}/${key.id}`, {})).status).toBe(400);
    expect((await api.request<VirtualKeyData>('GET', `${VIRTUAL_KEYS}/${key.id}`)).body.data).toEqual(before);
  });

  it('answers a malformed id with 400 and an unknown one with 404', async () => {
    expect((await api.request('GET', `${VIRTUAL_KEYS}/123`)).status).toBe(400);
    expect((await api.request('DELETE', `${VIRTUAL_KEYS}/123`)).body.errorDetails.fields?.[0]?.field).toBe(
      'id',
    );
    const unknown = `${VIRTUAL_KEYS}/${randomUUID()}`;
    expect((await api.request('GET', unknown)).status).toBe(404);
    expect((await api.request('PATCH', unknown, { fallbacks: [] })).status).toBe(404);
    expect((await api.request('DELETE', unknown)).status).toBe(404);
  });

  it('answers a duplicate name with 409', async () => {
    const key = await createVirtualKey(api);
    const provider = await createProvider(api);
    const dup = await api.request('POST', VIRTUAL_KEYS, {
      name: key.name,
      providers: [{ provider_id: provider.id, model_names: ['*'] }],
    });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ message: 'Conflict', errorDetails: { field: 'name' } });
    const other = await createVirtualKey(api);
    expect((await api.request('PATCH', `${VIRTUAL_KEYS}/${other.id}`, { name: key.name })).status).toBe(409);
  });

  it('refuses to delete a key a project uses, naming the project', async () => {
    const key = await createVirtualKey(api);
    const project = await createProject(api, { virtual_key_id: key.id });
    const refused = await api.request('DELETE', `${VIRTUAL_KEYS}/${key.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.errorDetails).toEqual({
      reason: 'still referenced',
      referenced_by: [{ type: 'project', id: project.id, name: project.name }],
    });
    expect((await findVirtualKeyBySecret(api.server.deps.db, key.secret_key))?.id).toBe(key.id);
    const cleared = await api.request<ProjectData>('PATCH', `/api/agent-server/projects/${project.id}`, {
      virtual_key_id: null,
    });
    expect(cleared.status).toBe(200);
    expect((await api.request('DELETE', `${VIRTUAL_KEYS}/${key.id}`)).status).toBe(200);
  });
});
