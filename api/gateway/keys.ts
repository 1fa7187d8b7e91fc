import { ReadCache, type ChangeFeed } from '../cache/change-feed.js';
import type { Db } from '../../core/db/knex.js';
import type { DbProvider } from '../../core/db/tables/index.js';
import { ProvidersRepository } from '../../core/repositories/providers.repository.js';
import {
  findKeyBySecret,
  hashVirtualKeySecret,
  keyExpired,
  type GatewayKey,
} from '../../core/security/virtual-keys.js';
import { unauthorized } from './errors.js';

/** Presented secrets whose hash KeyResolver keeps (cleared when full). */
const MAX_HASHES = 10_000;

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
  /** Whether a provider of this name exists, by name; any provider change drops them all. */
  private readonly providerNames: ReadCache<{ exists: boolean }>;

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
    this.providerNames = new ReadCache<{ exists: boolean }>(feed, 'providers', {
      ttlMs: 60_000,
      max: 10_000,
    });
    feed.subscribe((change) => {
      if (change !== 'all' && change.table === 'virtual_keys') {
        this.cache.clear();
        this.hashes.clear();
      }
    });
  }

  /**
   * The cache key of each presented secret (its SHA-256 in hex), kept so a
   * key's every call does not hash it again (~2% of a gateway call's CPU).
   * Holds secrets in memory as every in-flight request already does; bounded,
   * and dropped with the key cache.
   */
  private readonly hashes = new Map<string, string>();

  /**
   * Read-your-writes for the replica that made a key change: the notification
   * reaches this process's LISTEN connection a moment after the commit, so the
   * writer clears its own cache at once. Other replicas rely on the notification.
   */
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

  /** Whether some provider, granted to this key or not, has this name. */
  async providerExists(name: string): Promise<boolean> {
    const found = await this.providerNames.get(name, async () => ({
      exists: (await new ProvidersRepository(this.db).findByIdsOrNames([], [name])).length > 0,
    }));
    return found?.exists ?? false;
  }

  /** The key for this secret, or a 401 naming why (missing, unknown, expired). */
  async authenticate(secret: string | undefined): Promise<GatewayKey> {
    if (!secret) throw unauthorized('missing API key: present a virtual key');
    const hash = this.hashOf(secret);
    const key = await this.cache.get(hash, () => findKeyBySecret(this.db, secret));
    if (!key) throw unauthorized('invalid API key: no such virtual key');
    if (keyExpired(key)) throw unauthorized('virtual key has expired');
    return key;
  }
}

/**
 * The providers a key may reach: its grants and the providers its fallbacks
 * name, in one indexed query (KeyResolver caches them per key until a key or
 * provider changes).
 */
export async function loadKeyProviders(db: Db, key: GatewayKey): Promise<DbProvider[]> {
  const ids = key.grants.map((g) => g.provider_id);
  const names = key.fallbacks.map((f) => f.slice(0, f.indexOf('/')));
  return new ProvidersRepository(db).findByIdsOrNames(ids, names);
}
