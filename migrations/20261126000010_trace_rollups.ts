import type { Knex } from 'knex';

/**
 * Per-minute span counts and latencies, the source of the trace statistics
 * (core/telemetry/rollups.ts). Every process adds what it counted since its
 * last flush with one upsert per batch of keys, so replicas and minutes add
 * up: counts, sums and token totals add, min and max take the extreme, and
 * the latency histogram (`buckets`, a JSON object of base-2 exponential
 * bucket index → count, core/telemetry/rollup-histogram.ts) adds bucket by
 * bucket in `trace_rollup_merge`. Key columns hold '' rather than NULL for
 * "none", so the unique key needs no NULLS NOT DISTINCT (Postgres 15+).
 * A new table: nothing to lock or backfill.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create function trace_rollup_merge(a jsonb, b jsonb) returns jsonb
    language sql immutable parallel safe as $$
      select coalesce(jsonb_object_agg(k, n), '{}'::jsonb)
        from (select k, sum(v::bigint) as n
                from (select key as k, value as v from jsonb_each_text(a)
                      union all
                      select key, value from jsonb_each_text(b)) e
               group by k) s
    $$`);
  await knex.schema.createTable('trace_rollups', (t) => {
    // The minute the spans started in (their start_time truncated), as the span list filters by start.
    t.timestamp('minute', { useTz: true }).notNullable();
    t.text('service_name').notNullable();
    t.text('span_name').notNullable();
    t.text('span_kind').notNullable();
    t.text('project_id').notNullable().defaultTo('');
    // 'error' (span status ERROR: a 5xx for HTTP) or 'ok'.
    t.text('status').notNullable();
    // An entry span of its service (what /stats/services counts): HTTP requests, workflow runs and handlers.
    t.boolean('entry').notNullable();
    // Model calls only (CLIENT spans with gen_ai.request.model): provider, model, virtual key.
    t.text('provider').notNullable().defaultTo('');
    t.text('model').notNullable().defaultTo('');
    t.text('virtual_key_id').notNullable().defaultTo('');
    t.bigInteger('count').notNullable();
    t.double('sum_ms').notNullable();
    t.double('min_ms').notNullable();
    t.double('max_ms').notNullable();
    t.jsonb('buckets').notNullable().defaultTo('{}');
    t.bigInteger('input_tokens').notNullable().defaultTo(0);
    t.bigInteger('output_tokens').notNullable().defaultTo(0);
    // NULL while no span of the row carried a cost.
    t.double('cost_usd');
    // Minute first: every read is a window of minutes, and pruning deletes the oldest.
    t.primary([
      'minute',
      'service_name',
      'span_name',
      'span_kind',
      'project_id',
      'status',
      'entry',
      'provider',
      'model',
      'virtual_key_id',
    ]);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('trace_rollups');
  await knex.raw('drop function trace_rollup_merge(jsonb, jsonb)');
}
