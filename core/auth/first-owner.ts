import type { Db } from '../db/knex.js';
import { ConflictError, isUniqueViolation } from '../errors.js';
import { hashPassword } from './passwords.js';
import { credentialDigest, newCredential, sameSecret } from './secrets.js';

/** Taken for the length of the transaction, so two setups racing on two replicas make one owner, not two. */
const FIRST_OWNER_LOCK = 0x61677375; // "agsu"

export interface FirstOwner {
  userName: string;
  password: string;
  displayName?: string | null;
}

/**
 * Creates the organisation's first owner, once. `refuseWhen`: `any-user` for
 * the setup route (only a server with nobody in it may be claimed with a
 * setup token), `any-owner` for the bootstrap command (run by whoever holds
 * the database, it may also give an owner to users provisioned by SCIM).
 * Every setup token is deleted in the same transaction: none works twice.
 */
export async function createFirstOwner(
  db: Db,
  owner: FirstOwner,
  refuseWhen: 'any-user' | 'any-owner',
): Promise<{ id: string; user_name: string }> {
  const passwordHash = await hashPassword(owner.password);
  return db.transaction(async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(?)', [FIRST_OWNER_LOCK]);
    const existing = trx('users');
    if (refuseWhen === 'any-owner') existing.where({ org_role: 'owner' });
    if (await existing.first('id'))
      throw new ConflictError({
        reason:
          refuseWhen === 'any-owner' ? 'an owner already exists' : 'the first owner already exists: sign in',
      });
    let row: { id: string; user_name: string };
    try {
      [row] = (await trx('users')
        .insert({
          user_name: owner.userName,
          display_name: owner.displayName || null,
          org_role: 'owner',
          password_hash: passwordHash,
        })
        .returning(['id', 'user_name'])) as [{ id: string; user_name: string }];
    } catch (err) {
      if (isUniqueViolation(err))
        throw new ConflictError({ field: 'user_name', reason: 'a user with this name already exists' });
      throw err;
    }
    await trx('setup_tokens').delete();
    return row;
  });
}

/** Whether `given` is a setup token: AUTH_SETUP_TOKEN, or one a replica printed at start (stored as its digest). */
export async function isSetupToken(db: Db, fixed: string | undefined, given: string): Promise<boolean> {
  if (fixed !== undefined && sameSecret(given, fixed)) return true;
  const found = await db('setup_tokens')
    .where({ token_hash: credentialDigest(given) })
    .first<{ token_hash: string } | undefined>('token_hash');
  return found !== undefined;
}

/** A fresh setup token, its digest stored; the caller shows the secret once. */
export async function issueSetupToken(db: Db): Promise<string> {
  const secret = newCredential('setup');
  await db('setup_tokens').insert({ token_hash: credentialDigest(secret) });
  return secret;
}

export async function hasUsers(db: Db): Promise<boolean> {
  return (await db('users').first<{ id: string } | undefined>('id')) !== undefined;
}

/** A personal API token of `userId` with the user's full roles and no expiry; the secret is returned, its digest stored. */
export async function issuePersonalToken(
  db: Db,
  userId: string,
  name: string,
): Promise<{ id: string; secret: string }> {
  const secret = newCredential('personal');
  const [row] = (await db('api_tokens')
    .insert({
      name,
      kind: 'personal',
      user_id: userId,
      created_by: userId,
      token_hash: credentialDigest(secret),
      token_prefix: secret.slice(0, 16),
    })
    .returning('id')) as [{ id: string }];
  return { id: row.id, secret };
}
