import type { Knex } from 'knex';

/**
 * Webhooks: endpoints a project registers for run and eval events, the
 * one-off URL a converse request names for its own run, and the deliveries
 * (an outbox: written when the event happens, sent and retried by a Temporal
 * workflow, each attempt kept). New tables only: no lock on an existing one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhooks', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.text('url').notNullable();
    t.jsonb('events').notNullable();
    t.boolean('enabled').notNullable().defaultTo(true);
    // The signing secret (`whsec_…`), encrypted with SECRETS_KEY like provider keys.
    t.text('secret_enc').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['project_id', 'created_at']);
  });
  // The one-off URL of a converse request, with the secret made for that run alone.
  await knex.schema.createTable('run_webhooks', (t) => {
    // An \`id\` like every table with an encrypted column (secrets rotation walks them by id).
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('run_id').notNullable().unique().references('id').inTable('runs').onDelete('CASCADE');
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.text('url').notNullable();
    t.text('secret_enc').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('CASCADE');
    // null: the run's one-off URL (run_webhooks).
    t.uuid('webhook_id').references('id').inTable('webhooks').onDelete('CASCADE');
    t.uuid('run_id').references('id').inTable('runs').onDelete('CASCADE');
    t.text('event_type').notNullable();
    // What makes the event unique for its target: a retried activity inserts nothing new.
    t.text('event_key').notNullable();
    t.text('url').notNullable();
    // The body as sent, every attempt the same bytes: {type, timestamp, data}.
    t.text('payload').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.jsonb('attempts').notNullable().defaultTo('[]');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['webhook_id', 'created_at']);
    t.index(['run_id']);
  });
  await knex.raw(
    `create unique index webhook_deliveries_once on webhook_deliveries
       (coalesce(webhook_id::text, 'run'), event_key)`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_deliveries');
  await knex.schema.dropTable('run_webhooks');
  await knex.schema.dropTable('webhooks');
}
