import type { Knex } from 'knex';

/**
 * Budget leases (core/metering/leases.ts): a replica takes a slice of a key's
 * budget in one transaction and spends it locally. The slice is added to the
 * ledger's `reserved_usd` when granted; what the replica spends moves to
 * `spent_usd` as its settles are written (`consumed_usd` here follows), and
 * what is left goes back when the lease ends. A replica renews
 * `expires_at` while it holds the lease; once it has passed (the replica
 * died), whichever replica next takes a lease of the key returns
 * `granted_usd - consumed_usd` to the ledger and deletes the row.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('gateway_budget_leases', (t) => {
    t.uuid('id').primary();
    t.uuid('virtual_key_id').notNullable().references('id').inTable('virtual_keys').onDelete('CASCADE');
    t.timestamp('period_start', { useTz: true }).notNullable();
    t.decimal('granted_usd', 18, 8).notNullable();
    t.decimal('consumed_usd', 18, 8).notNullable().defaultTo(0);
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['virtual_key_id', 'expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  // What leases still hold goes back to the ledger, or it would stay reserved for good.
  await knex.raw(`
    update gateway_budget_ledger g
       set reserved_usd = greatest(g.reserved_usd - b.held, 0)
      from (select virtual_key_id, period_start, sum(granted_usd - consumed_usd) as held
              from gateway_budget_leases group by 1, 2) b
     where g.virtual_key_id = b.virtual_key_id and g.period_start = b.period_start`);
  await knex.schema.dropTable('gateway_budget_leases');
}
