/**
 * A model the key does not grant is refused as that, on every surface (403,
 * code `model_not_granted` in the surface's own slot for a code), before any
 * price or ambiguity check: `<provider>/<model>` naming a provider the key
 * does not grant is not read as a bare model id of a wildcard grant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { createProvider, createVirtualKey, type ProviderData } from '../../helpers/factories/config.js';
import { startOpenAiVendor } from '../../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../../fixtures/vendors/scripted-server.js';
import { FORMATS, type Format } from './gateway-harness.js';
import { chatRequest, expectShape } from './raw-requests.js';

let api: TestApi;
let vendor: ScriptedVendor;
let granted: ProviderData;
let alsoGranted: ProviderData;
let notGranted: ProviderData;

beforeAll(async () => {
  api = await startTestApi();
  vendor = await startOpenAiVendor();
  const base = { provider_type: 'openai', base_url: `${vendor.url}/v1` };
  granted = await createProvider(api, base);
  alsoGranted = await createProvider(api, base);
  notGranted = await createProvider(api, base);
});
afterAll(async () => {
  await api.close();
  await vendor.close();
});

/** The gateway's own code in each surface's slot for one. */
function codeOf(surface: Format, body: unknown): unknown {
  const error = (body as { error: Record<string, unknown> }).error;
  if (surface === 'openai') return error.code;
  if (surface === 'anthropic') return (error.details as { error_code?: string } | undefined)?.error_code;
  return (error.details as Array<{ reason?: string }> | undefined)?.[0]?.reason?.toLowerCase();
}

async function expectNotGranted(surface: Format, res: Response, asked: string): Promise<void> {
  const body: unknown = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(403);
  expect(expectShape(surface, body)).toContain(`"${asked}" is not granted`);
  expect(codeOf(surface, body)).toBe('model_not_granted');
}

describe.each(FORMATS)('the %s surface', (surface) => {
  it("refuses a model of a provider the key does not grant, not 'no price is known' under a budget", async () => {
    const key = await createVirtualKey(api, {
      providers: [{ provider_id: granted.id, model_names: ['*'] }],
      budget: { max_usd: 1, period: 'day' },
    });
    const asked = `${notGranted.name}/unpriced-model`;
    await expectNotGranted(
      surface,
      await chatRequest(api, surface, asked, { secret: key.secret_key }),
      asked,
    );
  });

  it("refuses it too with two wildcard grants, not 'is ambiguous'", async () => {
    const key = await createVirtualKey(api, {
      providers: [
        { provider_id: granted.id, model_names: ['*'] },
        { provider_id: alsoGranted.id, model_names: ['*'] },
      ],
    });
    const asked = `${notGranted.name}/gpt-4o-mini`;
    await expectNotGranted(
      surface,
      await chatRequest(api, surface, asked, { secret: key.secret_key }),
      asked,
    );
  });

  it('refuses a bare model id no grant names', async () => {
    const key = await createVirtualKey(api, {
      providers: [{ provider_id: granted.id, model_names: ['only-this'] }],
    });
    await expectNotGranted(
      surface,
      await chatRequest(api, surface, 'gpt-4o-mini', { secret: key.secret_key }),
      'gpt-4o-mini',
    );
  });
});

it('still reads a slashed model id whose prefix names no provider as a bare id of a wildcard grant', async () => {
  const key = await createVirtualKey(api, { providers: [{ provider_id: granted.id, model_names: ['*'] }] });
  const res = await chatRequest(api, 'openai', 'meta-llama/llama-3-8b', { secret: key.secret_key });
  expect(res.status).toBe(200);
  expect(vendor.received.at(-1)?.body.model).toBe('meta-llama/llama-3-8b');
});
