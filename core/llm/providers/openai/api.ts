import type { Endpoint } from '../../adapter.js';
import type { ProviderTarget } from '../../types.js';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** base_url is what the official SDK takes, so it already ends in /v1. */
export function openaiUrl(target: ProviderTarget, _model: string, endpoint: Endpoint): string {
  const base = (target.base_url ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  return endpoint === 'embed' ? `${base}/embeddings` : `${base}/chat/completions`;
}

export function openaiHeaders(target: ProviderTarget): Record<string, string> {
  const auth: Record<string, string> = target.api_key ? { authorization: `Bearer ${target.api_key}` } : {};
  return { ...target.headers, ...auth };
}
