import type { Db } from '../db/knex.js';
import type { SecretBox, SecretKeyRole } from './secrets.js';

const CHECK_PLAINTEXT = 'agent-server secrets check v1';

/** Thrown at start-up when SECRETS_KEY is not the key this database's secrets were encrypted with. */
export class WrongSecretsKeyError extends Error {
  override name = 'WrongSecretsKeyError';
}

/** The key a stored check value is under, or undefined when it is not this database's check under either. */
export function checkValueKey(box: SecretBox, stored: string): SecretKeyRole | undefined {
  const opened = box.tryOpen(stored);
  return opened?.plaintext === CHECK_PLAINTEXT ? opened.key : undefined;
}

/**
 * The first start stores a value encrypted with SECRETS_KEY; every later start
 * decrypts it, so a wrong key stops the process with a clear error instead of
 * failing later on each provider call with garbage. During a key rotation the
 * value may still be under SECRETS_KEY_PREVIOUS: the answer says which key
 * opened it ('previous': the rotation has not finished).
 */
export async function verifySecretsKey(db: Db, box: SecretBox): Promise<SecretKeyRole> {
  await db('secrets_check')
    .insert({ id: 1, check_value: box.encrypt(CHECK_PLAINTEXT) })
    .onConflict('id')
    .ignore();
  const row = await db('secrets_check').where({ id: 1 }).first();
  const key = row ? checkValueKey(box, row.check_value) : undefined;
  if (key) return key;
  throw new WrongSecretsKeyError(
    box.hasPreviousKey
      ? 'Neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS matches the key this database was set up with: stored provider keys and MCP headers cannot be decrypted'
      : 'SECRETS_KEY does not match the key this database was set up with: stored provider keys and MCP headers cannot be decrypted',
  );
}
