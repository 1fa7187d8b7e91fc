import type { Knex } from 'knex';
import type { Db } from './knex.js';

/**
 * Housekeeping deletes: `deleteSql` (one `?` for the chunk size, after
 * `bindings`) runs in chunks so no statement holds locks for long, each under
 * a transaction-level advisory lock named `lock`, so one replica prunes at a
 * time and the others skip that round. Returns the rows deleted.
 */
export async function deleteInChunks(
  db: Db,
  lock: string,
  deleteSql: string,
  bindings: Knex.RawBinding[],
  chunk = 10_000,
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await db.transaction(async (trx) => {
      const { rows } = await trx.raw<{ rows: Array<{ ok: boolean }> }>(
        `select pg_try_advisory_xact_lock(hashtext(?)) as ok`,
        [lock],
      );
      if (!rows[0]?.ok) return -1;
      const res = await trx.raw<{ rowCount: number }>(deleteSql, [...bindings, chunk]);
      return res.rowCount;
    });
    if (deleted < 0) return total;
    total += deleted;
    if (deleted < chunk) return total;
  }
}
