import type { Db } from '../db/knex.js';
import { SecretDecryptionError, type SecretBox } from './secrets.js';

const CHECK_PLAINTEXT = 'agent-server secrets check v1';

/** Thrown at start-up when SECRETS_KEY is not the key this database's secrets were encrypted with. */
export class WrongSecretsKeyError extends Error {
  override name = 'WrongSecretsKeyError';
}

/**
 * The first start stores a value encrypted with SECRETS_KEY; every later start
 * decrypts it, so a wrong key stops the process with a clear error instead of
 * failing later on each provider call with garbage.
 */
export async function verifySecretsKey(db: Db, box: SecretBox): Promise<void> {
  await db('secrets_check')
    .insert({ id: 1, check_value: box.encrypt(CHECK_PLAINTEXT) })
    .onConflict('id')
    .ignore();
  const row = (await db('secrets_check').where({ id: 1 }).first()) as { check_value: string } | undefined;
  try {
    if (!row || box.decrypt(row.check_value) !== CHECK_PLAINTEXT) throw new SecretDecryptionError('mismatch');
  } catch (err) {
    if (err instanceof SecretDecryptionError) {
      throw new WrongSecretsKeyError(
        'SECRETS_KEY does not match the key this database was set up with: stored provider keys and MCP headers cannot be decrypted',
      );
    }
    throw err;
  }
}
