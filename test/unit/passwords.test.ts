import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../core/auth/passwords.js';

describe('passwords', () => {
  it('are stored as argon2id PHC strings, salted: the same password hashes differently', async () => {
    const a = await hashPassword('correct horse battery staple');
    const b = await hashPassword('correct horse battery staple');
    expect(a).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain('correct horse');
  });

  it('verify the right password only', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(await verifyPassword(stored, 'correct horse battery staple')).toBe(true);
    expect(await verifyPassword(stored, 'correct horse battery stapl')).toBe(false);
    expect(await verifyPassword(stored, '')).toBe(false);
  });

  it('never match without a stored hash or with one that is not a hash, yet do the same work', async () => {
    expect(await verifyPassword(null, 'anything')).toBe(false);
    expect(await verifyPassword(undefined, '')).toBe(false);
    expect(await verifyPassword('plain text', 'plain text')).toBe(false);
    const stored = await hashPassword('correct horse battery staple');
    const time = async (f: () => Promise<unknown>) => {
      const start = performance.now();
      for (let i = 0; i < 3; i++) await f();
      return performance.now() - start;
    };
    await verifyPassword(null, 'warm up');
    const known = await time(() => verifyPassword(stored, 'wrong'));
    const unknown = await time(() => verifyPassword(null, 'wrong'));
    // The same argon2 parameters: an unknown user costs about what a known one does (loose bound: a shared machine).
    expect(unknown).toBeGreaterThan(known / 4);
  });
});
