import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/** Thrown when a stored secret cannot be decrypted: wrong SECRETS_KEY or a tampered value. */
export class SecretDecryptionError extends Error {
  override name = 'SecretDecryptionError';
}

const VERSION = 'v1';
/** Stored values whose plaintext decryptCached keeps (providers' keys and headers in use). */
const MAX_OPENED = 1_000;

/** Which of a SecretBox's keys opens a stored value. */
export type SecretKeyRole = 'current' | 'previous';

/**
 * AES-256-GCM with a random 96-bit nonce per value. Stored form:
 * `v1.<nonce b64>.<tag b64>.<ciphertext b64>`; the version prefix lets a later
 * format change tell formats apart.
 *
 * Key rotation (scripts/rotate-secrets.ts): values are always written under
 * the current key (SECRETS_KEY); the previous key (SECRETS_KEY_PREVIOUS), when
 * given, is tried for values the current one cannot open. GCM's tag tells a
 * wrong key apart with certainty, so no key id is stored.
 */
export class SecretBox {
  /**
   * Made once: given a Buffer, every createCipheriv/createDecipheriv call
   * builds a new native key object from it (~4% of the gateway's CPU, which
   * decrypts the provider key on every call).
   */
  private readonly key: KeyObject;
  private readonly previousKey: KeyObject | undefined;
  /** See decryptCached. */
  private readonly opened = new Map<string, string>();

  constructor(key: Buffer, previousKey?: Buffer) {
    if (key.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes');
    if (previousKey && previousKey.length !== 32) throw new Error('SECRETS_KEY_PREVIOUS must be 32 bytes');
    this.key = createSecretKey(key);
    this.previousKey = previousKey && !previousKey.equals(key) ? createSecretKey(previousKey) : undefined;
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

  /** True while a rotation is configured (SECRETS_KEY_PREVIOUS given and different from SECRETS_KEY). */
  get hasPreviousKey(): boolean {
    return this.previousKey !== undefined;
  }

  decrypt(stored: string): string {
    return this.open(stored).plaintext;
  }

  /**
   * `decrypt`, remembered by stored value: the gateway opens the provider's
   * key and headers on every call, and AES-GCM with its buffers was about 3%
   * of a call's CPU. A stored value is immutable (a new secret is a new
   * nonce, so a new value) and only this box's keys opened it, so the entry
   * can never be stale; a changed provider brings a new stored value.
   * Bounded: cleared when full.
   */
  decryptCached(stored: string): string {
    let plaintext = this.opened.get(stored);
    if (plaintext === undefined) {
      plaintext = this.decrypt(stored);
      if (this.opened.size >= MAX_OPENED) this.opened.clear();
      this.opened.set(stored, plaintext);
    }
    return plaintext;
  }

  /** Like open, but undefined when neither key opens the value (or it is not one of ours). */
  tryOpen(stored: string): { plaintext: string; key: SecretKeyRole } | undefined {
    try {
      return this.open(stored);
    } catch (err) {
      if (err instanceof SecretDecryptionError) return undefined;
      throw err;
    }
  }

  /** The plaintext and the key that opened it; throws SecretDecryptionError when neither does. */
  open(stored: string): { plaintext: string; key: SecretKeyRole } {
    const [version, nonce, tag, body] = stored.split('.');
    if (version !== VERSION || !nonce || !tag || body === undefined)
      throw new SecretDecryptionError('unrecognised secret format');
    const parts = { nonce: Buffer.from(nonce, 'base64'), tag: Buffer.from(tag, 'base64'), body };
    const plaintext = decryptWith(this.key, parts);
    if (plaintext !== undefined) return { plaintext, key: 'current' };
    const previous = this.previousKey && decryptWith(this.previousKey, parts);
    if (previous !== undefined) return { plaintext: previous, key: 'previous' };
    throw new SecretDecryptionError(
      this.previousKey
        ? 'secret cannot be decrypted with SECRETS_KEY nor SECRETS_KEY_PREVIOUS'
        : 'secret cannot be decrypted with this SECRETS_KEY',
    );
  }

  encryptJson(value: unknown): string {
    return this.encrypt(JSON.stringify(value));
  }

  decryptJson<T>(stored: string): T {
    return JSON.parse(this.decrypt(stored)) as T;
  }
}

/** The plaintext, or undefined when the tag does not match: another key (or a tampered value). */
function decryptWith(
  key: KeyObject,
  parts: { nonce: Buffer; tag: Buffer; body: string },
): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, parts.nonce);
    decipher.setAuthTag(parts.tag);
    return Buffer.concat([decipher.update(Buffer.from(parts.body, 'base64')), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    return undefined;
  }
}

/** Header values that look like credentials come back as `[redacted]`: the rules are in core/security/redact.ts. */
export { redactHeaders } from '../security/redact.js';
