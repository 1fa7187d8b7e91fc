import type { Endpoint } from '../../adapter.js';
import { UnsupportedFeatureError } from '../../errors.js';
import type { ProviderTarget } from '../../types.js';

const DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';

export function anthropicUrl(target: ProviderTarget, _model: string, endpoint: Endpoint): string {
  if (endpoint === 'embed') throw new UnsupportedFeatureError('embeddings', 'anthropic');
  return `${(target.base_url ?? DEFAULT_BASE_URL).replace(/\/+$/, '')}/v1/messages`;
}

/** The provider's own headers may pin another anthropic-version or add anthropic-beta. */
export function anthropicHeaders(target: ProviderTarget): Record<string, string> {
  const auth: Record<string, string> = target.api_key ? { 'x-api-key': target.api_key } : {};
  return { 'anthropic-version': ANTHROPIC_VERSION, ...target.headers, ...auth };
}
