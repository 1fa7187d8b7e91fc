import type { Knex } from 'knex';

/**
 * Spans are found by trace through a hash index on trace_id instead of the
 * (trace_id, span_id) primary key. Trace ids are random, so every span
 * inserted into the btree went to a random leaf of an index of ~70 bytes per
 * entry that outgrows shared_buffers; the hash index stores 4 bytes of hash
 * per entry and goes straight to its bucket. Postgres CPU per stored span,
 * paced at a gateway's rate into a table of 1.5M spans: 17.7 → 12.2 µs
 * (bench/traces/span-store.bench.ts measures the COPY itself).
 *
 * Uniqueness is kept where a span can arrive twice: a workflow task re-run
 * after its worker died emits its workflow spans again with the same ids
 * (they are made deterministically inside the workflow sandbox). Every other
 * span is exported once by the process that ended it, with random ids, so
 * a unique index over those would only be paid for, never hit.
 *
 * Built concurrently (no transaction): span writes go on during the build.
 * `down` puts the primary key back, first removing any duplicate a span
 * outside the workflow scope might have gained meanwhile.
 */
export const config = { transaction: false };

const WORKFLOW_SCOPE = '@temporalio/interceptor-workflow';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'create index concurrently if not exists spans_trace_id_hash_index on spans using hash (trace_id)',
  );
  await knex.raw(
    `create unique index concurrently if not exists spans_workflow_span_unique on spans (trace_id, span_id)
      where scope_name = '${WORKFLOW_SCOPE}'`,
  );
  await knex.raw('alter table spans drop constraint if exists spans_pkey');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    `delete from spans a using spans b
      where a.trace_id = b.trace_id and a.span_id = b.span_id and a.ctid > b.ctid`,
  );
  await knex.raw('alter table spans add constraint spans_pkey primary key (trace_id, span_id)');
  await knex.raw('drop index if exists spans_workflow_span_unique');
  await knex.raw('drop index if exists spans_trace_id_hash_index');
}
