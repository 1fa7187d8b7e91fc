import type { Knex } from 'knex';

/**
 * Finished spans from every process (api, worker), written in batches by
 * core/telemetry/postgres-exporter.ts and pruned after TRACE_RETENTION_DAYS.
 * No foreign keys: spans outlive (and may precede) the rows they mention, and
 * a delete of a project must never wait on its traces.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('spans', (t) => {
    t.text('trace_id').notNullable();
    t.text('span_id').notNullable();
    t.text('parent_span_id');
    t.text('name').notNullable();
    t.text('kind').notNullable();
    t.text('service_name').notNullable();
    t.text('scope_name');
    t.timestamp('start_time', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('end_time', { useTz: true, precision: 6 }).notNullable();
    t.double('duration_ms').notNullable();
    t.text('status_code').notNullable();
    t.text('status_message');
    t.jsonb('attributes').notNullable().defaultTo('{}');
    t.jsonb('events').notNullable().defaultTo('[]');
    // Copied out of the attributes so the trace list can filter on them with an index.
    t.text('project_id');
    t.text('agent_id');
    t.text('conversation_id');
    t.primary(['trace_id', 'span_id']);
    t.index(['start_time']);
    t.index(['service_name', 'name', 'start_time']);
  });
  // Partial: most spans carry none of these ids, and each index is paid on every insert.
  for (const column of ['project_id', 'agent_id', 'conversation_id']) {
    await knex.raw(
      `create index spans_${column}_start_time_index on spans (${column}, start_time) where ${column} is not null`,
    );
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('spans');
}
