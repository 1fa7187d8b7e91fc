import type { Knex } from 'knex';

/** One pool's connections now (tarn's counters): what `db.client.connection.*` reports. */
export interface PoolStats {
  name: string;
  used: number;
  idle: number;
  /** Callers waiting for a connection. */
  pending: number;
  max: number;
}

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  max: number;
}

/**
 * The process's Knex pools, by name, for the metrics: held weakly, so a pool
 * nobody uses any more is not kept alive by being counted; a destroyed one
 * (Knex drops its pool) is forgotten at the next read.
 */
const pools = new Set<{ name: string; db: WeakRef<Knex> }>();

export function registerPool(name: string, db: Knex): void {
  pools.add({ name, db: new WeakRef(db) });
}

/** Every live pool's counters, summed by name (the api and the worker share `main` under `npm start`). */
export function poolStats(): PoolStats[] {
  const byName = new Map<string, PoolStats>();
  for (const entry of pools) {
    const pool = (entry.db.deref()?.client as { pool?: TarnPool } | undefined)?.pool;
    if (!pool) {
      pools.delete(entry);
      continue;
    }
    const s = byName.get(entry.name) ?? { name: entry.name, used: 0, idle: 0, pending: 0, max: 0 };
    s.used += pool.numUsed();
    s.idle += pool.numFree();
    s.pending += pool.numPendingAcquires();
    s.max += pool.max;
    byName.set(entry.name, s);
  }
  return [...byName.values()];
}
