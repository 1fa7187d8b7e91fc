import type { Knex } from 'knex';

/**
 * Drops the (service_name, name, start_time) index on spans. Every span paid
 * for it on insert (about a fifth of Postgres's CPU per span: COPY into a
 * 300k-row table, bench/traces/span-store.bench.ts), while the reads barely
 * use it: the statistics aggregate every span of their time window (found
 * through the start_time index; a service filter only narrows what they
 * aggregate), and the trace list's span-name filter is a substring match no
 * btree serves. Dropping an index loses no data; `down` builds it again (on
 * a large table that takes a while and blocks span writes meanwhile; they
 * queue, then drop and count, and requests never wait).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('spans', (t) => {
    t.dropIndex(['service_name', 'name', 'start_time']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('spans', (t) => {
    t.index(['service_name', 'name', 'start_time']);
  });
}
