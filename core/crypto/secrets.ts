import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/** Thrown when a stored secret cannot be decrypted: wrong SECRETS_KEY or a tampered value. */
export class SecretDecryptionError extends Error {
  override name = 'SecretDecryptionError';
}

const VERSION = 'v1';

/**
 * AES-256-GCM with a random 96-bit nonce per value. Stored form:
 * `v1.<nonce b64>.<tag b64>.<ciphertext b64>`; the version prefix lets a later
 * key rotation tell formats apart.
 */
export class SecretBox {
  /**
   * Made once: given a Buffer, every createCipheriv/createDecipheriv call
   * builds a new native key object from it (~4% of the gateway's CPU, which
   * decrypts the provider key on every call).
   */
  private readonly key: KeyObject;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes');
    this.key = createSecretKey(key);
  }

  encrypt(plaintext: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      VERSION,
      nonce.toString('base64'),
      cipher.getAuthTag().toString('base64'),
      body.toString('base64'),
    ].join('.');
  }

  decrypt(stored: string): string {
    const [version, nonce, tag, body] = stored.split('.');
    if (version !== VERSION || !nonce || !tag || body === undefined)
      throw new SecretDecryptionError('unrecognised secret format');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(nonce, 'base64'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretDecryptionError('secret cannot be decrypted with this SECRETS_KEY');
    }
  }

  encryptJson(value: unknown): string {
    return this.encrypt(JSON.stringify(value));
  }

  decryptJson<T>(stored: string): T {
    return JSON.parse(this.decrypt(stored)) as T;
  }
}

/** Header values that look like credentials come back as `[redacted]`: the rules are in core/security/redact.ts. */
export { redactHeaders } from '../security/redact.js';
