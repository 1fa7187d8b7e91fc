import type { Knex } from 'knex';

/**
 * Crons: a turn an agent runs on a schedule, on a conversation or on a new
 * conversation each time. Each row is mirrored by one Temporal Schedule
 * (id `cron/<id>`), which does the timing; the row is what the APIs list.
 * A new table only: no lock on an existing one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('crons', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('CASCADE');
    // Its agent's or its conversation's delete removes it (and the worker removes a schedule left behind).
    t.uuid('agent_id').notNullable().references('id').inTable('agents').onDelete('CASCADE');
    t.uuid('conversation_pk').references('pk').inTable('conversations').onDelete('CASCADE');
    // The conversation's client id (the Agent Protocol's thread_id); null: a new conversation each time.
    t.text('conversation_id');
    t.text('schedule').notNullable();
    t.text('timezone').notNullable().defaultTo('UTC');
    t.timestamp('end_time', { useTz: true });
    // What each run is started with: {input, context?, config?} as the Agent Protocol sent it.
    t.jsonb('payload').notNullable().defaultTo('{}');
    // The user message each run sends (our converse message, taken from the payload's input).
    t.jsonb('message').notNullable();
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.text('overlap_policy').notNullable().defaultTo('skip');
    // A cron without a conversation: `delete` (the protocol's default) removes each run's conversation once it ends.
    t.text('on_run_completed');
    t.boolean('paused').notNullable().defaultTo(false);
    t.timestamp('next_run_date', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['project_id', 'created_at']);
    t.index(['agent_id']);
    t.index(['conversation_pk']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('crons');
}
