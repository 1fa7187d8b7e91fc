import type { Knex } from 'knex';

/**
 * Prompt caching in the usage log: of a call's input tokens (which count
 * every prompt token), how many were read from and written to the
 * provider's cache, so cost statistics can show what caching saved and
 * usage totals can be checked against the charged cost.
 *
 * Safe on a large table: since PostgreSQL 11 a column added with a constant
 * default is a catalog change only (no rewrite, no scan); the lock is brief.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('gateway_usage', (t) => {
    t.integer('cache_read_tokens').notNullable().defaultTo(0);
    t.integer('cache_write_tokens').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('gateway_usage', (t) => {
    t.dropColumn('cache_write_tokens');
    t.dropColumn('cache_read_tokens');
  });
}
