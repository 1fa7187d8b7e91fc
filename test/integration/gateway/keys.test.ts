import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { createProvider, createVirtualKey, VIRTUAL_KEYS } from '../../helpers/factories/config.js';
import { FORMATS, openaiClient, startHarness, type Harness } from './gateway-harness.js';
import { chatRequest, expectShape } from './raw-requests.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => FORMATS.forEach((f) => h.vendors[f].reset()));

const nothingForwarded = () => FORMATS.forEach((f) => expect(h.vendors[f].received).toHaveLength(0));

describe.each(FORMATS)('%s surface', (surface) => {
  const model = () => `${h.providers[surface].name}/m`;

  async function expect401(secret: string | undefined, reason: RegExp) {
    const res = await chatRequest(h.api, surface, model(), { secret });
    expect(res.status).toBe(401);
    expect(expectShape(surface, await res.json())).toMatch(reason);
  }

  it('a missing or unknown key is a 401 in the surface shape and nothing reaches the vendor', async () => {
    await expect401(undefined, /missing/);
    await expect401('sk-vk-not-a-real-key', /invalid/);
    nothingForwarded();
  });

  it('the admin token is not a gateway credential', async () => {
    await expect401('admin-token-is-not-a-key', /invalid/);
  });

  it('a rotated-away secret stops working at once; the new one works', async () => {
    const key = await createVirtualKey(h.api, {
      providers: [{ provider_id: h.providers[surface].id, model_names: ['*'] }],
    });
    expect((await chatRequest(h.api, surface, model(), { secret: key.secret_key })).status).toBe(200);
    const rotated = await h.api.request<{ secret_key: string }>('POST', `${VIRTUAL_KEYS}/${key.id}/rotate`);
    h.vendors[surface].reset();
    await expect401(key.secret_key, /invalid/);
    nothingForwarded();
    expect(
      (await chatRequest(h.api, surface, model(), { secret: rotated.body.data.secret_key })).status,
    ).toBe(200);
  });

  it('a deleted key is refused on the next request', async () => {
    const key = await createVirtualKey(h.api, {
      providers: [{ provider_id: h.providers[surface].id, model_names: ['*'] }],
    });
    expect((await chatRequest(h.api, surface, model(), { secret: key.secret_key })).status).toBe(200);
    expect((await h.api.request('DELETE', `${VIRTUAL_KEYS}/${key.id}`)).status).toBe(200);
    h.vendors[surface].reset();
    await expect401(key.secret_key, /invalid/);
    nothingForwarded();
  });

  it('an expired key is refused even while cached', async () => {
    const key = await createVirtualKey(h.api, {
      expires_at: new Date(Date.now() + 1500).toISOString(),
      providers: [{ provider_id: h.providers[surface].id, model_names: ['*'] }],
    });
    expect((await chatRequest(h.api, surface, model(), { secret: key.secret_key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1600));
    h.vendors[surface].reset();
    await expect401(key.secret_key, /expired/);
    nothingForwarded();
  });

  it('an ungranted provider or model is a 403 naming what was asked, and nothing is forwarded', async () => {
    const other = await createProvider(h.api, { provider_type: surface, base_url: h.vendors[surface].url });
    const key = await createVirtualKey(h.api, {
      providers: [{ provider_id: h.providers[surface].id, model_names: ['allowed-model'] }],
    });
    for (const asked of [`${h.providers[surface].name}/other-model`, `${other.name}/allowed-model`]) {
      const res = await chatRequest(h.api, surface, asked, { secret: key.secret_key });
      expect(res.status).toBe(403);
      expect(expectShape(surface, await res.json())).toContain(asked);
    }
    nothingForwarded();
    const ok = await chatRequest(h.api, surface, 'allowed-model', { secret: key.secret_key });
    expect(ok.status).toBe(200);
    expect(h.vendors[surface].received[0]!.body.model ?? h.vendors[surface].received[0]!.path).toContain(
      'allowed-model',
    );
  });
});

describe('model addressing', () => {
  it('a bare id granted by two providers is a 400 listing both; GET /models lists the grants', async () => {
    const key = await createVirtualKey(h.api, {
      providers: [
        { provider_id: h.providers.openai.id, model_names: ['gpt-a', 'shared'] },
        { provider_id: h.providers.anthropic.id, model_names: ['shared'] },
        { provider_id: h.providers.gemini.id, model_names: ['*'] },
      ],
    });
    const res = await chatRequest(h.api, 'openai', 'shared', { secret: key.secret_key });
    expect(res.status).toBe(400);
    const message = expectShape('openai', await res.json());
    expect(message).toContain(`${h.providers.openai.name}/shared`);
    expect(message).toContain(`${h.providers.anthropic.name}/shared`);
    const models = await fetch(`${h.api.url}/api/gateway/openai/v1/models`, {
      headers: { authorization: `Bearer ${key.secret_key}` },
    });
    const ids = ((await models.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id);
    expect(ids.sort()).toEqual(
      [
        `${h.providers.openai.name}/gpt-a`,
        `${h.providers.openai.name}/shared`,
        `${h.providers.anthropic.name}/shared`,
        `${h.providers.gemini.name}/*`,
      ].sort(),
    );
  });

  it('the Gemini surface takes the key as ?key= and Anthropic also as Bearer; the OpenAI SDK lists models', async () => {
    const model = `${h.providers.gemini.name}/g`;
    const viaQuery = await fetch(
      `${h.api.url}/api/gateway/gemini/v1beta/models/${model}:generateContent?key=${h.secret}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
      },
    );
    expect(viaQuery.status).toBe(200);
    expect(h.vendors.gemini.received[0]!.query.has('key')).toBe(false);
    const viaBearer = await fetch(`${h.api.url}/api/gateway/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${h.secret}` },
      body: JSON.stringify({
        model: `${h.providers.anthropic.name}/c`,
        max_tokens: 5,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    expect(viaBearer.status).toBe(200);
    const listed = [];
    for await (const m of openaiClient(h.api, h.secret).models.list()) listed.push(m.id);
    expect(listed.sort()).toEqual(FORMATS.map((f) => `${h.providers[f].name}/*`).sort());
  });

  it('a model id with slashes is split at the first slash only', async () => {
    const res = await chatRequest(h.api, 'openai', `${h.providers.openai.name}/meta-llama/llama-3-8b`, {
      secret: h.secret,
    });
    expect(res.status).toBe(200);
    expect(h.vendors.openai.received[0]!.body.model).toBe('meta-llama/llama-3-8b');
  });
});

describe('two API instances on one database', () => {
  let second: TestApi;
  beforeAll(async () => {
    second = await startTestApi({ SECRETS_KEY: h.api.config.secretsKey!.toString('base64') });
  });
  afterAll(() => second.close());

  it('a revocation and a rotation made on one are seen by the other on its next request', async () => {
    const grant = [{ provider_id: h.providers.openai.id, model_names: ['*'] }];
    const revoked = await createVirtualKey(h.api, { providers: grant });
    const rotated = await createVirtualKey(h.api, { providers: grant });
    const model = `${h.providers.openai.name}/m`;
    // Warm the second instance's cache with both keys.
    for (const k of [revoked, rotated]) {
      expect((await chatRequest(second, 'openai', model, { secret: k.secret_key })).status).toBe(200);
      expect((await chatRequest(second, 'openai', model, { secret: k.secret_key })).status).toBe(200);
    }
    expect((await h.api.request('DELETE', `${VIRTUAL_KEYS}/${revoked.id}`)).status).toBe(200);
    expect((await h.api.request('POST', `${VIRTUAL_KEYS}/${rotated.id}/rotate`)).status).toBe(200);
    // Notifications are delivered on commit; the next request must not be served from a stale cache.
    await expect
      .poll(async () => (await chatRequest(second, 'openai', model, { secret: revoked.secret_key })).status, {
        timeout: 2000,
        interval: 20,
      })
      .toBe(401);
    expect((await chatRequest(second, 'openai', model, { secret: rotated.secret_key })).status).toBe(401);
  });
});
