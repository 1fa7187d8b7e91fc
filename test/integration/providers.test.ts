import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type HttpResult, type TestApi } from '../helpers/api.js';
import { createProject } from '../helpers/factories.js';
import {
  PROVIDERS,
  VIRTUAL_KEYS,
  createModel,
  createProvider,
  createVirtualKey,
  fakeApiKey,
  providerName,
  type ProviderData,
  type VirtualKeyData,
} from '../helpers/factories/config.js';

describe('Providers API over real HTTP and Postgres', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api.close();
  });

  const providerRow = async (name: string) => api.server.deps.db('providers').where({ name }).first();

  it('creates, reads, lists, updates (rotating the key) and deletes a provider', async () => {
    const name = providerName();
    const key = fakeApiKey();
    const created = await api.request<ProviderData>('POST', PROVIDERS, {
      name,
      provider_type: 'anthropic',
      base_url: 'http://127.0.0.1:9',
      api_key: key,
      headers: { 'X-Org': 'acme', Authorization: 'Bearer hdr-secret-1' },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ error: false, status: 200, errorDetails: {} });
    const p = created.body.data;
    expect(p).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/) as string,
      name,
      provider_type: 'anthropic',
      base_url: 'http://127.0.0.1:9',
      has_api_key: true,
      api_key_last4: key.slice(-4),
      headers: { 'X-Org': 'acme', Authorization: '[redacted]' },
      connect_timeout_ms: 10_000,
      timeout_ms: 600_000,
      created_at: expect.any(String) as string,
      updated_at: expect.any(String) as string,
    });

    expect((await api.request<ProviderData>('GET', `${PROVIDERS}/${p.id}`)).body.data).toEqual(p);
    const list = await api.request<ProviderData[]>('GET', `${PROVIDERS}?limit=200`);
    expect(list.body.data.map((x) => x.id)).toContain(p.id);

    const rotated = fakeApiKey();
    const patched = await api.request<ProviderData>('PATCH', `${PROVIDERS}/${p.id}`, {
      api_key: rotated,
      timeout_ms: 30_000,
      // Sending back what was read keeps the stored secret value instead of storing "[redacted]".
      headers: { ...p.headers, 'X-Extra': 'yes' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      id: p.id,
      name,
      api_key_last4: rotated.slice(-4),
      timeout_ms: 30_000,
      connect_timeout_ms: 10_000,
      headers: { 'X-Org': 'acme', Authorization: '[redacted]', 'X-Extra': 'yes' },
    });
    const row = (await api.server.deps.db('providers').where({ id: p.id }).first())!;
    expect(api.server.deps.secrets.decrypt(row.api_key_enc!)).toBe(rotated);
    expect(api.server.deps.secrets.decryptJson(row.headers_enc!)).toEqual({
      'X-Org': 'acme',
      Authorization: 'Bearer hdr-secret-1',
      'X-Extra': 'yes',
    });

    const cleared = await api.request<ProviderData>('PATCH', `${PROVIDERS}/${p.id}`, {
      api_key: null,
      headers: null,
      base_url: null,
    });
    expect(cleared.body.data).toMatchObject({
      has_api_key: false,
      api_key_last4: null,
      headers: {},
      base_url: null,
    });

    const deleted = await api.request('DELETE', `${PROVIDERS}/${p.id}`);
    expect(deleted.body).toEqual({ error: false, message: 'OK', data: {}, status: 200, errorDetails: {} });
    expect((await api.request('GET', `${PROVIDERS}/${p.id}`)).status).toBe(404);
  });

  it('stores the key and header values encrypted: the row holds no plaintext', async () => {
    const key = fakeApiKey();
    const headerSecret = `hv-${randomUUID()}`;
    const plainHeader = `plain-${randomUUID()}`;
    const p = await createProvider(api, {
      api_key: key,
      headers: { 'x-api-key': headerSecret, 'X-Team': plainHeader },
    });
    const row = (await api.server.deps.db('providers').where({ id: p.id }).first())!;
    const raw = JSON.stringify(row);
    for (const plaintext of [key, headerSecret, plainHeader, key.slice(0, 20)])
      expect(raw).not.toContain(plaintext);
    expect(row.api_key_enc).toMatch(/^v1\./);
    expect(row.headers_enc).toMatch(/^v1\./);
    expect(p.headers).toEqual({ 'x-api-key': '[redacted]', 'X-Team': plainHeader });
  });

  it('never returns or logs the api key', async () => {
    const key = fakeApiKey();
    const headerSecret = `bearer-${randomUUID()}`;
    const ids: string[] = [];
    const responses: HttpResult[] = [];
    const send = async <T>(method: string, path: string, body?: unknown) => {
      const requestId = `prov-secret-${randomUUID()}`;
      ids.push(requestId);
      const res = await api.request<T>(method, path, body, { 'x-request-id': requestId });
      responses.push(res);
      return res;
    };
    const created = await send<ProviderData>('POST', PROVIDERS, {
      name: providerName(),
      provider_type: 'openai',
      base_url: 'http://127.0.0.1:9/v1',
      api_key: key,
      headers: { Authorization: headerSecret },
    });
    const id = created.body.data.id;
    await send('GET', `${PROVIDERS}/${id}`);
    await send('GET', `${PROVIDERS}?limit=200`);
    const rotated = fakeApiKey();
    await send('PATCH', `${PROVIDERS}/${id}`, { api_key: rotated });
    // A failing request that carries the key must not echo or log it either.
    await send('POST', PROVIDERS, { name: 'Bad Name!', provider_type: 'openai', api_key: key });
    await send('PATCH', `${PROVIDERS}/${id}`, { api_key: key, colour: 'red' });
    await send('PATCH', `${PROVIDERS}/${id}`, {
      headers: { Authorization: `${headerSecret}\r\nX-Injected: 1` },
    });

    for (const requestId of ids) expect(api.logs.text).toContain(requestId);
    for (const res of responses) {
      for (const secret of [key, rotated, headerSecret]) expect(res.text).not.toContain(secret);
    }
    for (const secret of [key, rotated, headerSecret]) expect(api.logs.text).not.toContain(secret);
  });

  it.each([
    ['unknown field', { colour: 'red' }, ['colour']],
    ['name with capitals', { name: 'Bad-Name' }, ['name']],
    ['over-long name', { name: 'a'.repeat(64) }, ['name']],
    ['missing name and type', { name: undefined, provider_type: undefined }, ['name', 'provider_type']],
    ['unknown provider_type', { provider_type: 'azure' }, ['provider_type']],
    ['non-http base_url', { base_url: 'ftp://127.0.0.1/x' }, ['base_url']],
    ['base_url that is no URL', { base_url: 'not a url' }, ['base_url']],
    ['wrong types', { api_key: 42, connect_timeout_ms: '5' }, ['api_key', 'connect_timeout_ms']],
    [
      'negative and zero timeouts',
      { connect_timeout_ms: -1, timeout_ms: 0 },
      ['connect_timeout_ms', 'timeout_ms'],
    ],
    ['fractional timeout', { timeout_ms: 1.5 }, ['timeout_ms']],
    ['non-string header value', { headers: { 'X-A': 1 } }, ['headers.X-A']],
    ['header value with a newline', { headers: { 'X-A': 'a\r\nX-Injected: 1' } }, ['headers.X-A']],
    ['header name with a space', { headers: { 'X A': 'v' } }, ['headers.X A']],
    [
      '"[redacted]" for a header that has no stored value',
      { headers: { 'X-A': '[redacted]' } },
      ['headers.X-A'],
    ],
  ])('rejects %s with 400 naming each field, and writes nothing', async (_label, patch, fields) => {
    const name = providerName();
    const body = {
      name,
      provider_type: 'openai',
      base_url: 'http://127.0.0.1:9/v1',
      api_key: fakeApiKey(),
      ...patch,
    };
    const res = await api.request('POST', PROVIDERS, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: true, message: 'Invalid request', status: 400, data: {} });
    const named = res.body.errorDetails.fields?.map((f) => f.field);
    for (const field of fields) expect(named).toContain(field);
    expect(await providerRow(typeof body.name === 'string' ? body.name : name)).toBeUndefined();
  });

  it('rejects a bad PATCH with 400 and leaves the provider as it was', async () => {
    const p = await createProvider(api);
    for (const body of [{}, { name: 'UPPER' }, { timeout_ms: -5 }, { api_key: '' }, { id: randomUUID() }]) {
      const res = await api.request('PATCH', `${PROVIDERS}/${p.id}`, body);
      expect(res.status).toBe(400);
    }
    expect((await api.request<ProviderData>('GET', `${PROVIDERS}/${p.id}`)).body.data).toEqual(p);
  });

  it('answers a malformed id with 400 and an unknown one with 404', async () => {
    const bad = await api.request('GET', `${PROVIDERS}/not-a-uuid`);
    expect(bad.status).toBe(400);
    expect(bad.body.errorDetails.fields?.[0]?.field).toBe('id');
    const unknown = `${PROVIDERS}/${randomUUID()}`;
    expect((await api.request('GET', unknown)).status).toBe(404);
    expect((await api.request('PATCH', unknown, { timeout_ms: 1000 })).status).toBe(404);
    const del = await api.request('DELETE', unknown);
    expect(del.status).toBe(404);
    expect(del.body).toMatchObject({ error: true, message: 'Not found', status: 404, data: {} });
  });

  it('answers a duplicate name with 409, on create and on rename', async () => {
    const a = await createProvider(api);
    const b = await createProvider(api);
    const dup = await api.request('POST', PROVIDERS, {
      name: a.name,
      provider_type: 'gemini',
      base_url: 'http://127.0.0.1:9',
    });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ error: true, message: 'Conflict', errorDetails: { field: 'name' } });
    expect((await api.request('PATCH', `${PROVIDERS}/${b.id}`, { name: a.name })).status).toBe(409);
    expect((await api.request<ProviderData>('GET', `${PROVIDERS}/${b.id}`)).body.data.name).toBe(b.name);
  });

  it('refuses to delete a provider a virtual key or a model uses, naming them', async () => {
    const p = await createProvider(api);
    const key = await createVirtualKey(api, { providers: [{ provider_id: p.id, model_names: ['gpt-4o'] }] });
    const project = await createProject(api);
    const model = await createModel(api, project.id, { provider_id: p.id });

    const refused = await api.request('DELETE', `${PROVIDERS}/${p.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.errorDetails).toEqual({
      reason: 'still referenced',
      referenced_by: expect.arrayContaining([
        { type: 'virtual_key', id: key.id, name: key.name },
        { type: 'model', id: model.id, name: model.name, project_id: project.id },
      ]) as unknown,
    });
    expect((await api.request('GET', `${PROVIDERS}/${p.id}`)).status).toBe(200);

    expect((await api.request('DELETE', `${VIRTUAL_KEYS}/${key.id}`)).status).toBe(200);
    expect((await api.request('DELETE', `/api/agent-server/models/${model.id}`)).status).toBe(200);
    expect((await api.request('DELETE', `${PROVIDERS}/${p.id}`)).status).toBe(200);
  });

  it('counts a fallback naming the provider as a reference, and a rename rewrites it', async () => {
    const p = await createProvider(api);
    const other = await createProvider(api);
    const key = await createVirtualKey(api, {
      providers: [{ provider_id: other.id, model_names: ['*'] }],
      fallbacks: [`${other.name}/gpt-4o`, `${p.name}/org/model-a`],
    });
    const refused = await api.request('DELETE', `${PROVIDERS}/${p.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.errorDetails.referenced_by).toEqual([
      { type: 'virtual_key', id: key.id, name: key.name },
    ]);

    const renamed = providerName();
    expect((await api.request('PATCH', `${PROVIDERS}/${p.id}`, { name: renamed })).status).toBe(200);
    const after = await api.request<VirtualKeyData>('GET', `${VIRTUAL_KEYS}/${key.id}`);
    expect(after.body.data.fallbacks).toEqual([`${other.name}/gpt-4o`, `${renamed}/org/model-a`]);
  });

  it('refuses a provider_type change under models of the old type', async () => {
    const p = await createProvider(api, { provider_type: 'gemini' });
    const project = await createProject(api);
    const model = await createModel(api, project.id, {
      provider_type: 'gemini',
      provider_id: p.id,
      model_id: 'gemini-2.0',
    });
    const res = await api.request('PATCH', `${PROVIDERS}/${p.id}`, { provider_type: 'openai' });
    expect(res.status).toBe(409);
    expect(res.body.errorDetails).toMatchObject({
      field: 'provider_type',
      referenced_by: [{ type: 'model', id: model.id }],
    });
    expect((await api.request<ProviderData>('GET', `${PROVIDERS}/${p.id}`)).body.data.provider_type).toBe(
      'gemini',
    );
  });
});
