import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { pgConnectionConfig, type DatabaseSsl } from './pg-ssl.js';
import { registerPool } from './pool-stats.js';

// Return BIGINT (int8) as numbers: our counters and token sums stay well below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export type Db = Knex;

const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');
// `.ts` under tsx and vitest; `.js` in the server image, which runs `tsc`'s output (scripts/image/).
const MIGRATION_EXT = path.extname(fileURLToPath(import.meta.url));

interface MigrationModule {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/**
 * Loads migrations with dynamic import, so the same TypeScript files run under
 * tsx (npm scripts) and vitest without a separate compile step, and their
 * compiled copies in the image. Either way a migration is named by its `.ts`
 * file (what knex_migrations records), so the two agree on what has run.
 */
class TsMigrationSource implements Knex.MigrationSource<string> {
  async getMigrations(): Promise<string[]> {
    const files = await readdir(MIGRATIONS_DIR);
    return files
      .filter((f) => /^\d{14}_[a-z0-9_]+\.[jt]s$/.test(f) && path.extname(f) === MIGRATION_EXT)
      .map((f) => `${path.basename(f, MIGRATION_EXT)}.ts`)
      .sort();
  }
  getMigrationName(migration: string): string {
    return migration;
  }
  async getMigration(migration: string): Promise<MigrationModule> {
    const file = `${path.basename(migration, '.ts')}${MIGRATION_EXT}`;
    return (await import(pathToFileURL(path.join(MIGRATIONS_DIR, file)).href)) as MigrationModule;
  }
}

/** Pool sizes (default 0..10), the pool's name and TLS. */
export interface DbOptions {
  min?: number;
  max?: number;
  /** Labels the pool's connection metrics (`db.client.connection.pool.name`). */
  name?: string;
  /** DATABASE_SSL_* (`config.database.ssl`); undefined: DATABASE_URL's own parameters decide. */
  ssl?: DatabaseSsl | undefined;
}

export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  const db = knexFactory({
    client: 'pg',
    connection: { ...pgConnectionConfig(databaseUrl, options.ssl), connectionTimeoutMillis: 5_000 },
    pool: { min: options.min ?? 0, max: options.max ?? 10 },
    acquireConnectionTimeout: 10_000,
    migrations: { migrationSource: new TsMigrationSource(), tableName: 'knex_migrations' },
  });
  registerPool(options.name ?? 'main', db);
  return db;
}

/**
 * A small node-postgres pool beside knex's, for one hot statement that
 * knex's per-query work would double (the gateway's usage inserts). An idle
 * connection's error is logged, not thrown (the pool drops it and connects
 * again on the next query).
 */
export function createSidePool(
  databaseUrl: string,
  options: { max: number; ssl?: DatabaseSsl | undefined; onError: (err: Error) => void },
): pg.Pool {
  const pool = new pg.Pool({
    ...pgConnectionConfig(databaseUrl, options.ssl),
    max: options.max,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
  });
  pool.on('error', options.onError);
  return pool;
}

export async function migrateLatest(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest()) as [number, string[]];
  return applied;
}

export async function rollback(db: Db, all = false): Promise<string[]> {
  const [, undone] = (await db.migrate.rollback(undefined, all)) as [number, string[]];
  return undone;
}
