import type { SecretBox } from '../crypto/secrets.js';
import type { DbProvider } from '../db/tables/index.js';
import type { ProviderTarget } from './types.js';

/**
 * A provider row as one call's target (it never outlives the request or
 * activity that made it), its key and headers opened through the box's
 * cache (SecretBox.decryptCached).
 */
export function targetOf(provider: DbProvider, secrets: SecretBox, hops = 0): ProviderTarget {
  return {
    hops,
    name: provider.name,
    type: provider.provider_type,
    base_url: provider.base_url,
    api_key: provider.api_key_enc ? secrets.decryptCached(provider.api_key_enc) : null,
    headers: provider.headers_enc
      ? (JSON.parse(secrets.decryptCached(provider.headers_enc)) as Record<string, string>)
      : {},
    connect_timeout_ms: provider.connect_timeout_ms,
    timeout_ms: provider.timeout_ms,
  };
}
