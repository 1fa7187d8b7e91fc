import type { Knex } from 'knex';

/**
 * An eval is a record of what a change did: deleting its agent (which
 * deletes nothing else of its conversations) keeps the eval and its results,
 * with `agent_id` null, instead of deleting them with it. The evals table is
 * new and small: changing its foreign key locks nothing that matters.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('evals', (t) => {
    t.dropForeign(['agent_id']);
  });
  await knex.schema.alterTable('evals', (t) => {
    t.uuid('agent_id').nullable().alter();
    t.foreign('agent_id').references('id').inTable('agents').onDelete('SET NULL');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex('evals').whereNull('agent_id').delete();
  await knex.schema.alterTable('evals', (t) => {
    t.dropForeign(['agent_id']);
  });
  await knex.schema.alterTable('evals', (t) => {
    t.uuid('agent_id').notNullable().alter();
    t.foreign('agent_id').references('id').inTable('agents').onDelete('CASCADE');
  });
}
