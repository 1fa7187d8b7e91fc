import type { Knex } from 'knex';

/**
 * Virtual keys are deleted softly: `deleted_at` marks a key revoked and
 * hidden, and its usage rows stay, so what a key spent remains auditable
 * after the key is gone. The usage foreign key loses its ON DELETE CASCADE
 * (RESTRICT: a key with usage can no longer be erased by accident). Names
 * are unique among live keys only, so a deleted key's name can be reused.
 *
 * No transaction: gateway_usage is large and written on every gateway call.
 * The new foreign key is added NOT VALID (a brief lock, no scan) and then
 * validated, which scans the table without blocking inserts; inside one
 * transaction the first step's lock would be held through the whole scan.
 * Every step is idempotent, so a run that stopped half-way can run again.
 */
export const config = { transaction: false };

const CASCADE_FK = 'gateway_usage_virtual_key_id_foreign';
const RESTRICT_FK = 'gateway_usage_virtual_key_id_restrict';
const NAME_UNIQUE = 'virtual_keys_name_unique';
const LIVE_NAME_UNIQUE = 'virtual_keys_name_live_unique';

async function hasConstraint(knex: Knex, table: string, name: string): Promise<boolean> {
  const { rows } = await knex.raw<{ rows: unknown[] }>(
    'select 1 from pg_constraint where conrelid = ?::regclass and conname = ?',
    [table, name],
  );
  return rows.length > 0;
}

/** Replaces gateway_usage's key foreign key `drop` by `add` (same columns, another ON DELETE). */
async function swapUsageForeignKey(
  knex: Knex,
  drop: string,
  add: string,
  onDelete: 'restrict' | 'cascade',
): Promise<void> {
  if (!(await hasConstraint(knex, 'gateway_usage', add))) {
    await knex.raw(
      `alter table gateway_usage add constraint ?? foreign key (virtual_key_id)
         references virtual_keys (id) on delete ${onDelete} not valid`,
      [add],
    );
  }
  await knex.raw('alter table gateway_usage drop constraint if exists ??', [drop]);
  await knex.raw('alter table gateway_usage validate constraint ??', [add]);
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table virtual_keys add column if not exists deleted_at timestamptz');
  await knex.raw(`create unique index if not exists ?? on virtual_keys (name) where deleted_at is null`, [
    LIVE_NAME_UNIQUE,
  ]);
  await knex.raw('alter table virtual_keys drop constraint if exists ??', [NAME_UNIQUE]);
  await swapUsageForeignKey(knex, CASCADE_FK, RESTRICT_FK, 'restrict');
}

/**
 * Soft-deleted keys cannot survive the old schema: without `deleted_at`
 * they would be live again and their secrets would work. So they are
 * deleted for good first, and their usage with them (the restored cascade):
 * the history this migration keeps is lost on rollback. A project still
 * naming one (only a race with the delete allows it) is cleared, as the old
 * schema's RESTRICT would never have let the key go otherwise.
 */
export async function down(knex: Knex): Promise<void> {
  await swapUsageForeignKey(knex, RESTRICT_FK, CASCADE_FK, 'cascade');
  if (await knex.schema.hasColumn('virtual_keys', 'deleted_at')) {
    await knex.raw(
      `update projects set virtual_key_id = null
        where virtual_key_id in (select id from virtual_keys where deleted_at is not null)`,
    );
    await knex.raw('delete from virtual_keys where deleted_at is not null');
  }
  if (!(await hasConstraint(knex, 'virtual_keys', NAME_UNIQUE))) {
    await knex.raw('alter table virtual_keys add constraint ?? unique (name)', [NAME_UNIQUE]);
  }
  await knex.raw('drop index if exists ??', [LIVE_NAME_UNIQUE]);
  await knex.raw('alter table virtual_keys drop column if exists deleted_at');
}
