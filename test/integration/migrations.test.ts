import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { inject } from 'vitest';
import { createDb, migrateLatest, rollback, type Db } from '../../core/db/knex.js';

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

  it('20261124000010 keeps a deleted key and its usage; down erases deleted keys and restores the cascade', async () => {
    const migration = '20261124000010_virtual_keys_soft_delete.ts';
    const onDelete = async () =>
      (
        await db.raw<{ rows: Array<{ confdeltype: string }> }>(
          `select confdeltype from pg_constraint
            where conrelid = 'gateway_usage'::regclass and contype = 'f' and confrelid = 'virtual_keys'::regclass`,
        )
      ).rows.map((r) => r.confdeltype);
    const key = (name: string, deleted = false) => ({
      name,
      key_hash: Buffer.from(randomUUID()),
      key_prefix: 'sk-vk-test',
      expires_at: null,
      rate_limit: null,
      budget: null,
      fallbacks: '[]',
      ...(deleted ? { deleted_at: new Date() } : {}),
    });
    const usage = (id: string) => ({ virtual_key_id: id, provider_name: 'p', model: 'm', status: 200 });

    expect(await onDelete()).toEqual(['r']);
    // Names are unique among live keys only.
    const [gone] = await db('virtual_keys').insert(key('shared', true)).returning('id');
    const [live] = await db('virtual_keys').insert(key('shared')).returning('id');
    await db('gateway_usage').insert([usage(gone!.id), usage(live!.id)]);
    // A key with usage cannot be erased by accident.
    await expect(db('virtual_keys').where({ id: live!.id }).delete()).rejects.toMatchObject({
      code: '23503',
    });

    await db.migrate.down({ name: migration });
    expect(await onDelete()).toEqual(['c']);
    expect(await db.schema.hasColumn('virtual_keys', 'deleted_at')).toBe(false);
    expect(await db('virtual_keys').where({ id: gone!.id }).first()).toBeUndefined();
    expect(await db('gateway_usage').where({ virtual_key_id: gone!.id })).toEqual([]);
    expect(await db('gateway_usage').where({ virtual_key_id: live!.id })).toHaveLength(1);
    await expect(db('virtual_keys').insert(key('shared'))).rejects.toMatchObject({ code: '23505' });

    await db.migrate.up({ name: migration });
    expect(await onDelete()).toEqual(['r']);
    expect(await db.schema.hasColumn('virtual_keys', 'deleted_at')).toBe(true);
    await db('virtual_keys').where({ id: live!.id }).update({ deleted_at: new Date() });
    await db('virtual_keys').insert(key('shared'));
  });
});
