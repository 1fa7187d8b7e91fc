import type { Knex } from 'knex';

/**
 * Span attributes and events are stored as `json` (the text, checked) instead
 * of `jsonb` (parsed into a binary tree with its keys sorted). Every span
 * pays for the parse on insert. Reads are rare: the trace detail returns the
 * text as it is, and the model statistics cast the CLIENT spans of their
 * window to jsonb once (api/repositories/traces.repository.ts). Postgres
 * backend CPU per stored span, COPY into a 1M-span table: 11.1 µs as jsonb
 * (bench/traces/span-store.bench.ts BENCH_WITH_JSONB=true, twice) → 8.0 and
 * 8.4 µs as json. Parsed alone, a gateway server span's attributes take
 * ~1.6 µs as jsonb and ~0.4 µs as json.
 *
 * Why this is safe to run on a live system: the type change rewrites `spans`
 * under an exclusive lock, a few seconds per million spans. Meanwhile span
 * exports wait (each process's queue is bounded: once full, new spans are
 * dropped and counted in /health/ready), trace reads wait, and requests never
 * do, as nothing on a request's path touches `spans`. No data changes: the
 * writer already cleans what jsonb would refuse (NUL, lone surrogates), so
 * `down` casts every row back.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table spans
      alter column attributes drop default,
      alter column attributes type json using attributes::json,
      alter column attributes set default '{}',
      alter column events drop default,
      alter column events type json using events::json,
      alter column events set default '[]'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table spans
      alter column attributes drop default,
      alter column attributes type jsonb using attributes::jsonb,
      alter column attributes set default '{}',
      alter column events drop default,
      alter column events type jsonb using events::jsonb,
      alter column events set default '[]'`);
}
