import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { createProvider, createVirtualKey, type ProviderData } from '../../helpers/factories/config.js';
import { startAnthropicVendor } from '../../fixtures/vendors/anthropic.js';
import { startGeminiVendor } from '../../fixtures/vendors/gemini.js';
import { startOpenAiVendor } from '../../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../../fixtures/vendors/scripted-server.js';

export type Format = 'openai' | 'anthropic' | 'gemini';
export const FORMATS: Format[] = ['openai', 'anthropic', 'gemini'];

/** Each provider's base_url exactly as its official SDK takes it, pointing at the scripted vendor. */
const baseUrl = (format: Format, vendor: ScriptedVendor) =>
  format === 'openai' ? `${vendor.url}/v1` : vendor.url;

export interface Harness {
  api: TestApi;
  vendors: Record<Format, ScriptedVendor>;
  providers: Record<Format, ProviderData>;
  /** A key granting every model of the three providers. */
  secret: string;
  keyId: string;
  close(): Promise<void>;
}

export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const api = await startTestApi(env);
  const vendors = {
    openai: await startOpenAiVendor(),
    anthropic: await startAnthropicVendor(),
    gemini: await startGeminiVendor(),
  };
  const providers = {} as Record<Format, ProviderData>;
  for (const f of FORMATS) {
    providers[f] = await createProvider(api, {
      provider_type: f,
      base_url: baseUrl(f, vendors[f]),
      headers: { 'x-extra': `hdr-${f}` },
    });
  }
  const key = await createVirtualKey(api, {
    providers: FORMATS.map((f) => ({ provider_id: providers[f].id, model_names: ['*'] })),
  });
  return {
    api,
    vendors,
    providers,
    secret: key.secret_key,
    keyId: key.id,
    close: async () => {
      await api.close();
      await Promise.all(FORMATS.map((f) => vendors[f].close()));
    },
  };
}

export const openaiClient = (api: TestApi, apiKey: string) =>
  new OpenAI({ baseURL: `${api.url}/api/gateway/openai/v1`, apiKey, maxRetries: 0 });
export const anthropicClient = (api: TestApi, apiKey: string) =>
  new Anthropic({ baseURL: `${api.url}/api/gateway/anthropic`, apiKey, maxRetries: 0 });
export const geminiClient = (api: TestApi, apiKey: string) =>
  new GoogleGenAI({
    apiKey,
    httpOptions: { baseUrl: `${api.url}/api/gateway/gemini`, apiVersion: 'v1beta' },
  });
