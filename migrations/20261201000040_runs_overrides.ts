import type { Knex } from 'knex';

/**
 * What a turn was asked to run with instead of its agent's configuration
 * (converse `overrides`: a prompt version, a model, model parameters), so
 * the plan applies them and the run view shows them. Null: the agent as
 * configured.
 *
 * A nullable column without a default: a catalog change only.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.jsonb('overrides');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('overrides');
  });
}
