import type { Knex } from 'knex';

/**
 * The Agent Protocol's threads are conversations and its runs are runs: a
 * conversation gains the thread's `metadata` (searched by containment, hence
 * the GIN index), and a run records the door it came through and what that
 * door's client asked beside the message (its metadata, stream modes,
 * multitask strategy). Both columns are new with defaults: no rewrite of
 * existing rows' data beyond the catalog change.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('conversations', (t) => {
    t.jsonb('metadata').notNullable().defaultTo('{}');
  });
  await knex.raw(
    'create index conversations_metadata_gin on conversations using gin (metadata jsonb_path_ops)',
  );
  await knex.schema.alterTable('runs', (t) => {
    t.text('door').notNullable().defaultTo('api');
    t.jsonb('protocol').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('protocol');
    t.dropColumn('door');
  });
  await knex.raw('drop index if exists conversations_metadata_gin');
  await knex.schema.alterTable('conversations', (t) => {
    t.dropColumn('metadata');
  });
}
