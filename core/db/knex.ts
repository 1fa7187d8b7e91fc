import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { registerPool } from './pool-stats.js';

// Return BIGINT (int8) as numbers: our counters and token sums stay well below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export type Db = Knex;

const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');

interface MigrationModule {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/**
 * Loads migrations with dynamic import, so the same TypeScript files run under
 * tsx (npm scripts) and vitest without a separate compile step.
 */
class TsMigrationSource implements Knex.MigrationSource<string> {
  async getMigrations(): Promise<string[]> {
    const files = await readdir(MIGRATIONS_DIR);
    return files.filter((f) => /^\d{14}_[a-z0-9_]+\.ts$/.test(f)).sort();
  }
  getMigrationName(migration: string): string {
    return migration;
  }
  async getMigration(migration: string): Promise<MigrationModule> {
    return (await import(pathToFileURL(path.join(MIGRATIONS_DIR, migration)).href)) as MigrationModule;
  }
}

/** `pool.name` labels the pool's connection metrics (`db.client.connection.pool.name`). */
export function createDb(databaseUrl: string, pool: { min?: number; max?: number; name?: string } = {}): Db {
  const db = knexFactory({
    client: 'pg',
    connection: { connectionString: databaseUrl, connectionTimeoutMillis: 5_000 },
    pool: { min: pool.min ?? 0, max: pool.max ?? 10 },
    acquireConnectionTimeout: 10_000,
    migrations: { migrationSource: new TsMigrationSource(), tableName: 'knex_migrations' },
  });
  registerPool(pool.name ?? 'main', db);
  return db;
}

export async function migrateLatest(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest()) as [number, string[]];
  return applied;
}

export async function rollback(db: Db, all = false): Promise<string[]> {
  const [, undone] = (await db.migrate.rollback(undefined, all)) as [number, string[]];
  return undone;
}
