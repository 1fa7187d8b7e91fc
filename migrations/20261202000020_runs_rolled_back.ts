import type { Knex } from 'knex';

/**
 * A run cancelled with `rollback` keeps its row for audit while its
 * messages, summaries and events leave the conversation; the flag says so.
 * The status check already allows `cancelled`.
 *
 * A constant default: a catalog change only (no table rewrite since PG 11).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.boolean('rolled_back').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('rolled_back');
  });
}
