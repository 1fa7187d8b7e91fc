/**
 * Virtual keys as callers present them: the secret's hash, the live key a
 * secret names, and the two checks every model call makes of its key
 * (expiry and the model grant), for the gateway and agent sessions alike.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/knex.js';
import { VirtualKeysRepository } from '../repositories/virtual-keys.repository.js';
import type { Budget, RateLimit } from '../metering/types.js';

const SECRET_PREFIX = 'sk-vk-';
const KEY_PREFIX_LENGTH = 10;

/** A virtual key as model calls are checked and metered against it. */
export interface GatewayKey {
  id: string;
  name: string;
  expires_at: Date | null;
  rate_limit: RateLimit | null;
  budget: Budget | null;
  fallbacks: string[];
  grants: Array<{ provider_id: string; model_names: string[] }>;
}

/**
 * SHA-256 of the secret. The secret carries 256 random bits, so a fast hash is
 * enough (no dictionary to attack) and keeps the gateway's per-request lookup cheap.
 */
export function hashVirtualKeySecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** A new secret, the hash stored for it, and the prefix shown to tell keys apart. */
export function newVirtualKeySecret(): { secret: string; key_hash: Buffer; key_prefix: string } {
  const secret = SECRET_PREFIX + randomBytes(32).toString('base64url');
  return { secret, key_hash: hashVirtualKeySecret(secret), key_prefix: secret.slice(0, KEY_PREFIX_LENGTH) };
}

/**
 * The live key (with its grants) whose secret this is, or undefined (also
 * for a deleted key, which is revoked). It checks nothing else: expiry,
 * grants and limits are checked per call.
 */
export async function findKeyBySecret(db: Db, secret: string): Promise<GatewayKey | undefined> {
  const row = await new VirtualKeysRepository(db).findByHash(hashVirtualKeySecret(secret));
  if (!row) return undefined;
  return {
    id: row.id,
    name: row.name,
    expires_at: row.expires_at,
    rate_limit: row.rate_limit,
    budget: row.budget,
    fallbacks: row.fallbacks,
    grants: row.grants.map((g) => ({ provider_id: g.provider_id, model_names: g.model_names })),
  };
}

/** Whether the key has passed its expiry (a key without one never does). */
export function keyExpired(key: { expires_at: Date | null }, now = Date.now()): boolean {
  return key.expires_at !== null && key.expires_at.getTime() <= now;
}

/** Whether a grant's model names cover this model (`*` covers every model of the provider). */
export function grantsModel(modelNames: readonly string[], model: string): boolean {
  return modelNames.includes(model) || modelNames.includes('*');
}
