import type { Knex } from 'knex';

/**
 * Provisional usage rows (core/metering/usage-writer.ts): the gateway stores
 * a call's row while the call goes upstream, charged at its worst case, and
 * completes it with the actual figures after the answer has left. A row
 * still `provisional` belongs to a call whose replica stopped before it
 * could complete it: it stays charged at the worst case, never less.
 *
 * `lease_id`: the budget lease the call was admitted on
 * (gateway_budget_leases). When a dead replica's lease is returned, what its
 * calls cost is read from their rows here, so a charge that replica had not
 * yet written to the lease is not given back as unspent. Indexed only where
 * set (calls of keys with a budget).
 *
 * Safe on a large table: columns added with a constant default (or none) are
 * catalog changes only, and the index is built concurrently (no
 * transaction), so usage writes go on meanwhile.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table gateway_usage
    add column if not exists provisional boolean not null default false,
    add column if not exists lease_id uuid`);
  await knex.raw(
    `create index concurrently if not exists gateway_usage_lease_index on gateway_usage (lease_id)
      where lease_id is not null`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists gateway_usage_lease_index');
  await knex.raw(
    'alter table gateway_usage drop column if exists lease_id, drop column if exists provisional',
  );
}
