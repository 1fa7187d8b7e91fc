import type { SecretBox } from '../crypto/secrets.js';
import type { DbProvider } from '../db/llm-config.tables.js';
import type { ProviderTarget } from './types.js';

/**
 * A provider row as one call's target, its key decrypted just for this call
 * (the target never outlives the request or activity that made it).
 */
export function targetOf(provider: DbProvider, secrets: SecretBox, hops = 0): ProviderTarget {
  return {
    hops,
    name: provider.name,
    type: provider.provider_type,
    base_url: provider.base_url,
    api_key: provider.api_key_enc ? secrets.decrypt(provider.api_key_enc) : null,
    headers: provider.headers_enc ? secrets.decryptJson<Record<string, string>>(provider.headers_enc) : {},
    connect_timeout_ms: provider.connect_timeout_ms,
    timeout_ms: provider.timeout_ms,
  };
}
