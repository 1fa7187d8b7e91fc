import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable, whileDatabaseUnavailable } from '../../core/db/unavailable.js';

const err = (fields: Record<string, string>) => Object.assign(new Error(fields.message ?? 'x'), fields);

describe('waiting out an unavailable database', () => {
  it('tells an unreachable or restarting server from a wrong statement', () => {
    for (const e of [
      err({ code: 'ECONNREFUSED' }),
      err({ code: '57P01', message: 'terminating connection due to administrator command' }),
      err({ code: '08006' }),
      err({ message: 'Connection terminated unexpectedly' }),
      err({ message: 'Knex: Timeout acquiring a connection. The pool is probably full.' }),
    ])
      expect(isDatabaseUnavailable(e), e.message).toBe(true);
    for (const e of [err({ code: '23505' }), err({ code: '42P01' }), new Error('boom'), undefined])
      expect(isDatabaseUnavailable(e)).toBe(false);
  });

  it('repeats the work while the database is away, and not a wrong statement', async () => {
    let calls = 0;
    const value = await whileDatabaseUnavailable(
      () => (++calls < 3 ? Promise.reject(err({ code: 'ECONNREFUSED' })) : Promise.resolve('stored')),
      5_000,
    );
    expect([value, calls]).toEqual(['stored', 3]);

    calls = 0;
    await expect(
      whileDatabaseUnavailable(() => {
        calls++;
        return Promise.reject(err({ code: '23505', message: 'duplicate key' }));
      }, 5_000),
    ).rejects.toThrow('duplicate key');
    expect(calls).toBe(1);
  });

  it('gives up after its bound with the last error', async () => {
    const started = Date.now();
    await expect(
      whileDatabaseUnavailable(() => Promise.reject(err({ code: 'ECONNRESET', message: 'reset' })), 500),
    ).rejects.toThrow('reset');
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
