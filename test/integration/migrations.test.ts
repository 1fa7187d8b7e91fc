import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { inject } from 'vitest';
import { createDb, migrateLatest, rollback, type Db } from '../../api/db/knex.js';

/** Migrations are reversible: all the way down and up again on a scratch database. */
describe('migrations', () => {
  const admin = inject('adminDatabaseUrl');
  const name = `agent_mig_${Date.now()}_${process.pid}`;
  let db: Db;

  beforeAll(async () => {
    const c = new pg.Client({ connectionString: admin! });
    await c.connect();
    await c.query(`create database ${name}`);
    await c.end();
    const u = new URL(admin!);
    u.pathname = `/${name}`;
    db = createDb(u.toString());
  });

  afterAll(async () => {
    await db.destroy();
    const c = new pg.Client({ connectionString: admin! });
    await c.connect();
    await c.query(`drop database if exists ${name} with (force)`);
    await c.end();
  });

  it('apply, roll back completely, and apply again', async () => {
    const applied = await migrateLatest(db);
    expect(applied.length).toBeGreaterThan(0);
    expect(await db.schema.hasTable('projects')).toBe(true);
    const undone = await rollback(db, true);
    expect(undone.sort()).toEqual([...applied].sort());
    expect(await db.schema.hasTable('projects')).toBe(false);
    expect(await migrateLatest(db)).toEqual(applied);
  });
});
