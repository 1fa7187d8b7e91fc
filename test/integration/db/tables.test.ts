import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import * as tables from '../../../core/db/tables/index.js';
import { databaseUrl } from '../../helpers/services.js';

/**
 * core/db/tables/ types every table the migrations create (each module names
 * its table; index.ts registers them all with Knex): a migration that adds a
 * table without a module, or a module left behind by a dropped table, fails here.
 */
describe('typed tables', () => {
  let db: Db;

  beforeAll(() => {
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await db?.destroy();
  });

  it('has one module for each table of the migrated database', async () => {
    const { rows } = await db.raw<{ rows: Array<{ table_name: string }> }>(
      `select table_name from information_schema.tables
        where table_schema = current_schema() and table_type = 'BASE TABLE'
          and table_name not in ('knex_migrations', 'knex_migrations_lock')`,
    );
    const typed = Object.entries(tables)
      .filter(([name]) => name.endsWith('TableName'))
      .map(([, table]) => table as string);
    expect(typed.length).toBe(new Set(typed).size);
    expect(typed.sort()).toEqual(rows.map((r) => r.table_name).sort());
  });
});
