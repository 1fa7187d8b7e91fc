import type { Knex } from 'knex';

/**
 * Gateway metering. Counters live in Postgres so every API replica sees the
 * same limits: a per-minute window row per key for rate limits, a ledger row
 * per key and budget period holding what was spent and what is reserved by
 * calls in flight, and one usage row per request.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('gateway_rate_windows', (t) => {
    t.uuid('virtual_key_id').notNullable().references('id').inTable('virtual_keys').onDelete('CASCADE');
    t.timestamp('window_start', { useTz: true }).notNullable();
    t.integer('requests').notNullable().defaultTo(0);
    t.bigInteger('tokens').notNullable().defaultTo(0);
    t.primary(['virtual_key_id', 'window_start']);
  });

  await knex.schema.createTable('gateway_budget_ledger', (t) => {
    t.uuid('virtual_key_id').notNullable().references('id').inTable('virtual_keys').onDelete('CASCADE');
    t.timestamp('period_start', { useTz: true }).notNullable();
    t.decimal('spent_usd', 18, 8).notNullable().defaultTo(0);
    t.decimal('reserved_usd', 18, 8).notNullable().defaultTo(0);
    t.primary(['virtual_key_id', 'period_start']);
  });

  await knex.schema.createTable('gateway_usage', (t) => {
    t.bigIncrements('id');
    t.uuid('virtual_key_id').notNullable().references('id').inTable('virtual_keys').onDelete('CASCADE');
    t.uuid('provider_id');
    t.text('provider_name').notNullable();
    t.text('model').notNullable();
    t.integer('input_tokens').notNullable().defaultTo(0);
    t.integer('output_tokens').notNullable().defaultTo(0);
    t.decimal('cost_usd', 18, 8).notNullable().defaultTo(0);
    t.integer('latency_ms').notNullable().defaultTo(0);
    t.integer('status').notNullable();
    t.text('trace_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['virtual_key_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('gateway_usage');
  await knex.schema.dropTable('gateway_budget_ledger');
  await knex.schema.dropTable('gateway_rate_windows');
}
