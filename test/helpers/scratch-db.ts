import pg from 'pg';
import { inject } from 'vitest';

/**
 * A database of its own on the run's PostgreSQL, for a test whose processes
 * need one (a spawned API or image with its own secrets key, a rotation):
 * `url` to connect, `drop()` when done (connections left open are ended).
 */
export async function createScratchDatabase(prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = inject('adminDatabaseUrl');
  if (!admin) throw new Error('no PostgreSQL from the global setup');
  const name = `${prefix}_${Date.now()}_${process.pid}`;
  const query = async (sql: string) => {
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await query(`create database ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => query(`drop database if exists ${name} with (force)`) };
}
