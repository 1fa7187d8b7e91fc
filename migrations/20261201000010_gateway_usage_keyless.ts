import type { Knex } from 'knex';

/**
 * Model calls no virtual key meters (an agent turn in a project without a
 * key) are logged too, with `virtual_key_id` null, so usage and its cost
 * count every call the server made, not only the keyed ones.
 *
 * Dropping NOT NULL is a catalog change only. Going down, the keyless rows
 * are deleted first (the column cannot hold them then), and setting NOT NULL
 * again scans the table under an exclusive lock: a rollback, not a
 * deployment step.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table gateway_usage alter column virtual_key_id drop not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('delete from gateway_usage where virtual_key_id is null');
  await knex.raw('alter table gateway_usage alter column virtual_key_id set not null');
}
