import type { Knex } from 'knex';

/**
 * A2A push notification configs: where a task's (a run's) updates are
 * pushed, with the client's token and authentication, encrypted with
 * SECRETS_KEY. Their pushes are webhook deliveries (`push_config_id`), so the
 * deliveries' uniqueness names that target too. A new table, a nullable
 * column, and the unique index rebuilt under its own name.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('a2a_push_configs', (t) => {
    // Our key (secrets rotation walks the table by it); `id` is the config's A2A id, unique per task.
    t.uuid('pk').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('id').notNullable();
    t.uuid('run_id').notNullable().references('id').inTable('runs').onDelete('CASCADE');
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.text('url').notNullable();
    t.text('token_enc');
    t.text('auth_scheme');
    t.text('credentials_enc');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['run_id', 'id']);
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.uuid('push_config_id').references('pk').inTable('a2a_push_configs').onDelete('CASCADE');
  });
  await knex.raw(`create index webhook_deliveries_push_config on webhook_deliveries (push_config_id)
    where push_config_id is not null`);
  await knex.raw(`create unique index webhook_deliveries_once_target on webhook_deliveries
    (coalesce(webhook_id::text, push_config_id::text, 'run'), event_key)`);
  await knex.raw('drop index webhook_deliveries_once');
  await knex.raw('alter index webhook_deliveries_once_target rename to webhook_deliveries_once');
}

export async function down(knex: Knex): Promise<void> {
  // Pushes would collide with the run's one-off deliveries under the old index.
  await knex('webhook_deliveries').whereNotNull('push_config_id').delete();
  await knex.raw('drop index webhook_deliveries_once');
  await knex.raw(`create unique index webhook_deliveries_once on webhook_deliveries
    (coalesce(webhook_id::text, 'run'), event_key)`);
  await knex.schema.alterTable('webhook_deliveries', (t) => t.dropColumn('push_config_id'));
  await knex.schema.dropTable('a2a_push_configs');
}
