/** SecretBox with a previous key, as during a SECRETS_KEY rotation. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox, SecretDecryptionError } from '../../../core/crypto/secrets.js';

const keyA = randomBytes(32);
const keyB = randomBytes(32);

describe('SecretBox keys', () => {
  it('writes under the current key and reads values under either key, saying which', () => {
    const underA = new SecretBox(keyA).encrypt('old');
    const rotating = new SecretBox(keyB, keyA);
    const underB = rotating.encrypt('new');
    expect(rotating.open(underA)).toEqual({ plaintext: 'old', key: 'previous' });
    expect(rotating.open(underB)).toEqual({ plaintext: 'new', key: 'current' });
    expect(new SecretBox(keyB).decrypt(underB)).toBe('new');
    expect(() => new SecretBox(keyA).decrypt(underB)).toThrowError(SecretDecryptionError);
  });

  it('refuses a value under a third key, naming both variables', () => {
    const stranger = new SecretBox(randomBytes(32)).encrypt('x');
    const rotating = new SecretBox(keyB, keyA);
    expect(rotating.tryOpen(stranger)).toBeUndefined();
    expect(() => rotating.decrypt(stranger)).toThrowError(
      'secret cannot be decrypted with SECRETS_KEY nor SECRETS_KEY_PREVIOUS',
    );
    expect(() => new SecretBox(keyB).decrypt(stranger)).toThrowError(
      'secret cannot be decrypted with this SECRETS_KEY',
    );
  });

  it('treats a previous key equal to the current one as no rotation', () => {
    expect(new SecretBox(keyA, Buffer.from(keyA)).hasPreviousKey).toBe(false);
    expect(new SecretBox(keyA, keyB).hasPreviousKey).toBe(true);
    expect(new SecretBox(keyA).hasPreviousKey).toBe(false);
  });

  it('decryptCached opens what decrypt opens, and a box never answers from another key', () => {
    const a = new SecretBox(keyA);
    const stored = a.encrypt('sk-provider');
    expect(a.decryptCached(stored)).toBe('sk-provider');
    expect(a.decryptCached(stored)).toBe('sk-provider');
    // A value is remembered per box: one without the key still cannot open it.
    expect(() => new SecretBox(keyB).decryptCached(stored)).toThrowError(SecretDecryptionError);
    // One ciphertext byte flipped (not a base64 padding bit, which decodes to the same bytes).
    const [version, nonce, tag, body] = stored.split('.');
    const bytes = Buffer.from(body!, 'base64');
    bytes[0] = bytes[0]! ^ 0xff;
    const tampered = [version, nonce, tag, bytes.toString('base64')].join('.');
    expect(() => a.decryptCached(tampered)).toThrowError(SecretDecryptionError);
  });
});
