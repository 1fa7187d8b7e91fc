/**
 * A provider whose base_url is this gateway, with a key that grants it, would
 * call itself until a limit or the call's timeout stopped it. The hop header
 * ends the loop at once with a 4xx the official SDKs do not retry.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOPS_HEADER, MAX_GATEWAY_HOPS } from '../../../core/llm/hops.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { createProvider, createVirtualKey } from '../../helpers/factories/config.js';
import { startOpenAiVendor } from '../../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../../fixtures/vendors/scripted-server.js';

describe('a provider pointing back at the gateway', () => {
  let api: TestApi;
  let vendor: ScriptedVendor;
  beforeAll(async () => {
    api = await startTestApi();
    vendor = await startOpenAiVendor();
  });
  afterAll(async () => {
    await api.close();
    await vendor.close();
  });

  it('is refused with a 400 after a few hops instead of looping', async () => {
    // The provider's key is filled in once the key that grants the provider exists.
    const loop = await createProvider(api, {
      provider_type: 'openai',
      base_url: `${api.url}/api/gateway/openai/v1`,
      api_key: 'placeholder',
    });
    const key = await createVirtualKey(api, { providers: [{ provider_id: loop.id, model_names: ['*'] }] });
    const patched = await api.request('PATCH', `/api/agent-server/providers/${loop.id}`, {
      api_key: key.secret_key,
    });
    expect(patched.status).toBe(200);

    const client = new OpenAI({
      baseURL: `${api.url}/api/gateway/openai/v1`,
      apiKey: key.secret_key,
      maxRetries: 0,
      timeout: 15_000,
    });
    const err = await client.chat.completions
      .create({ model: `${loop.name}/m`, messages: [{ role: 'user', content: 'hi' }] })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain(HOPS_HEADER);
    expect((err as Error).message).toContain(`${MAX_GATEWAY_HOPS} times`);
  });

  it('sends the hop count upstream and answers a normal call as before', async () => {
    const provider = await createProvider(api, { provider_type: 'openai', base_url: `${vendor.url}/v1` });
    const key = await createVirtualKey(api, {
      providers: [{ provider_id: provider.id, model_names: ['*'] }],
    });
    const client = new OpenAI({
      baseURL: `${api.url}/api/gateway/openai/v1`,
      apiKey: key.secret_key,
      maxRetries: 0,
    });
    await client.chat.completions.create({
      model: `${provider.name}/m`,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(vendor.received.at(-1)!.headers[HOPS_HEADER]).toBe('1');
    await client.chat.completions.create(
      { model: `${provider.name}/m`, messages: [{ role: 'user', content: 'hi' }] },
      { headers: { [HOPS_HEADER]: '2' } },
    );
    expect(vendor.received.at(-1)!.headers[HOPS_HEADER]).toBe('3');
  });

  it('refuses a malformed hop header naming it', async () => {
    const provider = await createProvider(api, { provider_type: 'openai', base_url: `${vendor.url}/v1` });
    const key = await createVirtualKey(api, {
      providers: [{ provider_id: provider.id, model_names: ['*'] }],
    });
    const res = await fetch(`${api.url}/api/gateway/openai/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key.secret_key}`,
        'content-type': 'application/json',
        [HOPS_HEADER]: 'many',
      },
      body: JSON.stringify({ model: `${provider.name}/m`, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain(HOPS_HEADER);
  });
});
