import { randomBytes } from 'node:crypto';
import type { TestApi } from '../api.js';
import { uniqueName } from '../factories.js';

/** Factories for providers, virtual keys and models, written through the API itself. */

export const PROVIDERS = '/api/agent-server/providers';
export const VIRTUAL_KEYS = '/api/agent-server/virtual-keys';
export const MODELS = '/api/agent-server/models';

export interface ProviderData {
  id: string;
  name: string;
  provider_type: 'openai' | 'anthropic' | 'gemini';
  base_url: string | null;
  has_api_key: boolean;
  api_key_last4: string | null;
  headers: Record<string, string>;
  connect_timeout_ms: number;
  timeout_ms: number;
  created_at: string;
  updated_at: string;
}

export interface GrantData {
  provider_id: string;
  model_names: string[];
}

export interface VirtualKeyData {
  id: string;
  name: string;
  key_prefix: string;
  secret_key?: string;
  providers: GrantData[];
  expires_at: string | null;
  rate_limit: { requests_per_minute?: number; tokens_per_minute?: number } | null;
  budget: { max_usd: number; period: string } | null;
  fallbacks: string[];
  created_at: string;
  updated_at: string;
}

export interface ModelData {
  id: string;
  project_id: string;
  name: string;
  model_id: string;
  provider_type: 'openai' | 'anthropic' | 'gemini';
  provider_id: string | null;
  parameters: Record<string, unknown>;
  pricing: {
    input_per_million_usd: number;
    output_per_million_usd: number;
    cache_read_per_million_usd?: number;
    cache_write_per_million_usd?: number;
  } | null;
  created_at: string;
  updated_at: string;
}

/** Provider names must match ^[a-z0-9][a-z0-9_-]{0,62}$. */
export const providerName = () => uniqueName('prov').toLowerCase();

/** A recognisable fake vendor key: long enough to get `api_key_last4`, unique per call. */
export const fakeApiKey = () => `sk-test-${randomBytes(24).toString('hex')}`;

function expectOk<T>(res: { status: number; text: string; body: { data: T } }, what: string): T {
  if (res.status !== 200) throw new Error(`${what} failed: ${res.status} ${res.text}`);
  return res.body.data;
}

/** Always with a loopback base_url: nothing may try to reach a real vendor. */
export async function createProvider(
  api: TestApi,
  body: Record<string, unknown> = {},
): Promise<ProviderData> {
  const res = await api.request<ProviderData>('POST', PROVIDERS, {
    name: providerName(),
    provider_type: 'openai',
    base_url: 'http://127.0.0.1:9/v1',
    api_key: fakeApiKey(),
    ...body,
  });
  return expectOk(res, 'createProvider');
}

/** A key granting every model of a fresh provider unless `providers` is given. */
export async function createVirtualKey(
  api: TestApi,
  body: Record<string, unknown> = {},
): Promise<VirtualKeyData & { secret_key: string }> {
  const providers = body.providers ?? [{ provider_id: (await createProvider(api)).id, model_names: ['*'] }];
  const res = await api.request<VirtualKeyData & { secret_key: string }>('POST', VIRTUAL_KEYS, {
    name: uniqueName('vk'),
    providers,
    ...body,
  });
  return expectOk(res, 'createVirtualKey');
}

/**
 * A model of the project. Without `provider_id` in `body` it is pinned to a
 * fresh provider of its type: providers are global and the run's tests share
 * them, so a model naming none would be refused while several of its type exist
 * (pass `provider_id: null` to send none).
 */
export async function createModel(
  api: TestApi,
  projectId: string,
  body: Record<string, unknown> = {},
): Promise<ModelData> {
  const providerType = (body.provider_type as string | undefined) ?? 'openai';
  const providerId =
    'provider_id' in body
      ? body.provider_id
      : (await createProvider(api, { provider_type: providerType })).id;
  const res = await api.request<ModelData>('POST', `${MODELS}?project_id=${projectId}`, {
    name: uniqueName('model'),
    model_id: 'gpt-test',
    provider_type: providerType,
    ...body,
    provider_id: providerId,
  });
  return expectOk(res, 'createModel');
}
