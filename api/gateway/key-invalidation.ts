import type { Db } from '../../core/db/knex.js';

/** One key cache per app (each app has its own Db), so a writer can clear its own app's cache. */
const cachesByDb = new WeakMap<Db, { clear(): void }>();

/** Called by the gateway's key resolver when it is built. */
export function registerKeyCache(db: Db, cache: { clear(): void }): void {
  cachesByDb.set(db, cache);
}

/**
 * Read-your-writes for the replica that made a key change: the notification
 * reaches this process's LISTEN connection a moment after the commit, so the
 * writer clears its own cache at once. Other replicas rely on the notification.
 */
export function keyChanged(db: Db): void {
  cachesByDb.get(db)?.clear();
}
