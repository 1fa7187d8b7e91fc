import type { Knex } from 'knex';

/**
 * Span attributes and events are stored as `json` (the text, checked) instead
 * of `jsonb` (parsed into a binary tree with its keys sorted). Every span
 * pays for the parse on insert. Reads are rare: the trace detail returns the
 * text as it is, and the model statistics cast the CLIENT spans of their
 * window to jsonb once (core/repositories/traces.repository.ts). Postgres
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
/** Both columns to `type`, their defaults dropped around the change (a default is not cast). */
function retype(knex: Knex, type: 'json' | 'jsonb'): Knex.Raw {
  const column = (name: string, empty: string) =>
    `alter column ${name} drop default, alter column ${name} type ${type} using ${name}::${type},
     alter column ${name} set default '${empty}'`;
  return knex.raw(`alter table spans ${column('attributes', '{}')}, ${column('events', '[]')}`);
}

export async function up(knex: Knex): Promise<void> {
  await retype(knex, 'json');
}

export async function down(knex: Knex): Promise<void> {
  await retype(knex, 'jsonb');
}
