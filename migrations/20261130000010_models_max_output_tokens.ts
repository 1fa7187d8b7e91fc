import type { Knex } from 'knex';

/**
 * A Model's output ceiling: the most tokens the vendor writes in one answer
 * for it. A budgeted key's call that sets no output limit is reserved at
 * this (core/metering/gateway-policy.ts); shipped models have it in
 * core/metering/pricing.ts, other models need it set to be called on a key
 * with a budget without an explicit limit.
 *
 * A nullable column without a default: a catalog change only.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('models', (t) => {
    t.integer('max_output_tokens');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('models', (t) => {
    t.dropColumn('max_output_tokens');
  });
}
