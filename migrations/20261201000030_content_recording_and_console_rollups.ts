import type { Knex } from 'knex';

/**
 * Two settings of what traces hold:
 *
 * - `projects.record_content`: the project's turns record prompts,
 *   completions, tool arguments and results on their spans
 *   (core/telemetry/turn-context.ts). Off unless turned on. A constant
 *   default: Postgres adds the column without rewriting the table.
 * - `trace_rollups.console`: counts of the web console's own requests (and
 *   what ran inside them), which the statistics leave out unless asked. Part
 *   of the rollup key, so the primary key is rebuilt with it (the table is
 *   per-minute aggregates, small beside the spans). Processes of the previous
 *   version cannot add to the new key: their flushes fail (and are retried
 *   with the next) until they are replaced.
 */
const KEY = [
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
];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('projects', (t) => {
    t.boolean('record_content').notNullable().defaultTo(false);
  });
  await knex.schema.alterTable('trace_rollups', (t) => {
    t.boolean('console').notNullable().defaultTo(false);
  });
  await knex.raw('alter table trace_rollups drop constraint trace_rollups_pkey');
  await knex.raw(
    `alter table trace_rollups add constraint trace_rollups_pkey primary key (${[...KEY, 'console'].join(', ')})`,
  );
}

/** The console's counts are merged into the others' (the old key cannot tell them apart). */
export async function down(knex: Knex): Promise<void> {
  const key = KEY.join(', ');
  const same = (a: string, b: string) =>
    `(${KEY.map((c) => `${a}.${c}`).join(', ')}) = (${KEY.map((c) => `${b}.${c}`).join(', ')})`;
  const values = `${key}, count, sum_ms, min_ms, max_ms, buckets, input_tokens, output_tokens, cost_usd`;
  await knex.raw('alter table trace_rollups drop constraint trace_rollups_pkey');
  await knex.raw(
    `with merged as (
       select ${key},
              sum(count)::bigint as count, sum(sum_ms) as sum_ms, min(min_ms) as min_ms, max(max_ms) as max_ms,
              (select coalesce(jsonb_object_agg(k, n), '{}'::jsonb)
                 from (select e.key as k, sum(e.value::bigint) as n
                         from trace_rollups i cross join jsonb_each_text(i.buckets) e
                        where ${same('i', 'o')}
                        group by e.key) s) as buckets,
              sum(input_tokens)::bigint as input_tokens, sum(output_tokens)::bigint as output_tokens,
              sum(cost_usd) as cost_usd
         from trace_rollups o
        group by ${key}
       having count(*) > 1),
     gone as (delete from trace_rollups t using merged m where ${same('t', 'm')})
     insert into trace_rollups (${values}) select ${values} from merged`,
  );
  await knex.schema.alterTable('trace_rollups', (t) => {
    t.dropColumn('console');
  });
  await knex.raw(`alter table trace_rollups add constraint trace_rollups_pkey primary key (${key})`);
  await knex.schema.alterTable('projects', (t) => {
    t.dropColumn('record_content');
  });
}
