import { ReadCache, type ChangeFeed } from '../cache/change-feed.js';
import type { Db } from '../../core/db/knex.js';
import type { DbProvider } from '../../core/db/llm-config.tables.js';
import { ProvidersRepository } from '../../core/repositories/providers.repository.js';
import { findVirtualKeyBySecret, hashVirtualKeySecret } from '../services/virtual-keys.service.js';
import { unauthorized } from './errors.js';
import { registerKeyCache } from './key-invalidation.js';

/** Presented secrets whose hash KeyResolver keeps (cleared when full). */
const MAX_HASHES = 10_000;

/** A virtual key as the gateway enforces it. */
export interface GatewayKey {
  id: string;
  name: string;
  expires_at: Date | null;
  rate_limit: { requests_per_minute?: number; tokens_per_minute?: number } | null;
  budget: { max_usd: number; period: string } | null;
  fallbacks: string[];
  grants: Array<{ provider_id: string; model_names: string[] }>;
}

/**
 * Resolves presented secrets to keys, cached in memory by the secret's hash.
 * Entries are keyed by hash but changes arrive by key id, so any change to a
 * virtual key drops the whole cache: writes are rare, and a rotated-away hash
 * must never be served again. The cache serves only while the change feed is
 * live (ReadCache's rule), so every replica sees a revocation on its next request.
 */
export class KeyResolver {
  private readonly cache: ReadCache<GatewayKey>;
  /** A key's granted and fallback providers, by key id; any provider change drops them all. */
  private readonly providerCache: ReadCache<DbProvider[]>;

  constructor(
    private readonly db: Db,
    feed: ChangeFeed,
  ) {
    this.cache = new ReadCache<GatewayKey>(feed, 'virtual_keys');
    this.providerCache = new ReadCache<DbProvider[]>(feed, 'virtual_keys', {
      ttlMs: 60_000,
      max: 10_000,
      alsoClearOn: ['providers'],
    });
    feed.subscribe((change) => {
      if (change !== 'all' && change.table === 'virtual_keys') {
        this.cache.clear();
        this.hashes.clear();
      }
    });
    registerKeyCache(db, this);
  }

  /**
   * The cache key of each presented secret (its SHA-256 in hex), kept so a
   * key's every call does not hash it again (~2% of a gateway call's CPU).
   * Holds secrets in memory as every in-flight request already does; bounded,
   * and dropped with the key cache.
   */
  private readonly hashes = new Map<string, string>();

  clear(): void {
    this.cache.clear();
    this.providerCache.clear();
    this.hashes.clear();
  }

  private hashOf(secret: string): string {
    let hash = this.hashes.get(secret);
    if (hash === undefined) {
      hash = hashVirtualKeySecret(secret).toString('hex');
      if (this.hashes.size >= MAX_HASHES) this.hashes.clear();
      this.hashes.set(secret, hash);
    }
    return hash;
  }

  /** The providers a key may reach (its grants and fallbacks), from the cache when it is live. */
  async providers(key: GatewayKey): Promise<DbProvider[]> {
    return (await this.providerCache.get(key.id, () => loadKeyProviders(this.db, key))) ?? [];
  }

  /** The key for this secret, or a 401 naming why (missing, unknown, expired). */
  async authenticate(secret: string | undefined): Promise<GatewayKey> {
    if (!secret) throw unauthorized('missing API key: present a virtual key');
    const hash = this.hashOf(secret);
    const key = await this.cache.get(hash, async () => {
      const found = await findVirtualKeyBySecret(this.db, secret);
      if (!found) return undefined;
      return {
        id: found.id,
        name: found.name,
        expires_at: found.expires_at ? new Date(found.expires_at) : null,
        rate_limit: found.rate_limit,
        budget: found.budget,
        fallbacks: found.fallbacks,
        grants: found.providers,
      };
    });
    if (!key) throw unauthorized('invalid API key: no such virtual key');
    if (key.expires_at && key.expires_at.getTime() <= Date.now())
      throw unauthorized('virtual key has expired');
    return key;
  }
}

/**
 * The providers a key may reach: its grants and the providers its fallbacks
 * name. Read on every request (providers are not cached: their writes send no
 * change notification yet), one indexed query.
 */
export async function loadKeyProviders(db: Db, key: GatewayKey): Promise<DbProvider[]> {
  const ids = key.grants.map((g) => g.provider_id);
  const names = key.fallbacks.map((f) => f.slice(0, f.indexOf('/')));
  return new ProvidersRepository(db).findByIdsOrNames(ids, names);
}
