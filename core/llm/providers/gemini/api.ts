import type { Endpoint } from '../../adapter.js';
import type { ProviderTarget } from '../../types.js';

const DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';

const ACTIONS: Record<Endpoint, string> = {
  chat: ':generateContent',
  stream: ':streamGenerateContent?alt=sse',
  // Batch, so one call embeds every input of an OpenAI-style request.
  embed: ':batchEmbedContents',
};

export function geminiUrl(target: ProviderTarget, model: string, endpoint: Endpoint): string {
  return geminiModelUrl(target, model, ACTIONS[endpoint]);
}

/** `action` is the `:method` suffix (with its query), e.g. `:embedContent`. */
export function geminiModelUrl(target: ProviderTarget, model: string, action: string): string {
  const base = (target.base_url ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  return `${base}/v1beta/models/${model}${action}`;
}

export function geminiHeaders(target: ProviderTarget): Record<string, string> {
  const auth: Record<string, string> = target.api_key ? { 'x-goog-api-key': target.api_key } : {};
  return { ...target.headers, ...auth };
}
