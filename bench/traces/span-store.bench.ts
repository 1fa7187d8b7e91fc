/**
 * What storing a span costs Postgres: the exporter's COPY (core/telemetry/
 * postgres-exporter.ts) against the insert it replaced (one json parameter
 * read by json_to_recordset, with ON CONFLICT DO NOTHING), in the same run,
 * on the same table, interleaved. The spans are a gateway request's pair (the
 * HTTP server span and the GenAI client span, with the attributes our code
 * sets). The figure is the Postgres backend's CPU per span (utime + stime from
 * /proc, summed over many batches to get past its 10 ms ticks), so other
 * processes on the machine move it less than they move wall time.
 *
 * BENCH_WITH_NAME_INDEX=true measures with the index dropped by migration
 * 20261123000090 put back; BENCH_WITH_PRIMARY_KEY=true with the primary key
 * that migration 20261123000100 replaced by a hash index on trace_id;
 * BENCH_WITH_JSONB=true with attributes and events as jsonb, the type
 * migration 20261123000110 replaced by json. BENCH_PREFILL spans go in first (default 300,000: index inserts cost more in
 * a table that no longer fits in a few pages); BENCH_BATCHES batches of
 * BENCH_BATCH spans each (default 100 × 512: the exporter's default batch).
 */
import { readFileSync } from 'node:fs';
import { SpanKind } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import { createDb } from '../../core/db/knex.js';
import { PostgresSpanExporter, type ConnectionPool } from '../../core/telemetry/postgres-exporter.js';
import { spanToCopyLine, type AnyReadableSpan } from '../../core/telemetry/span-row.js';
import { scratchDatabase } from '../lib/scratch.js';
import { requestSpans } from './request-spans.js';

const PREFILL = Number(process.env.BENCH_PREFILL ?? 300_000);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 100);
const BATCH = Number(process.env.BENCH_BATCH ?? 512);
/** `true`: put back the (service_name, name, start_time) index that migration 20261123000090 dropped. */
const NAME_INDEX = process.env.BENCH_WITH_NAME_INDEX === 'true';
/** `true`: the (trace_id, span_id) primary key that migration 20261123000100 replaced with a hash index. */
const PRIMARY_KEY = process.env.BENCH_WITH_PRIMARY_KEY === 'true';
/** `true`: attributes and events as jsonb, as before migration 20261123000110. */
const JSONB = process.env.BENCH_WITH_JSONB === 'true';

/** The statement the exporter used before COPY: the baseline. */
const JSON_INSERT = `
  insert into spans (trace_id, span_id, parent_span_id, name, kind, service_name, scope_name,
                     start_time, end_time, duration_ms, status_code, status_message,
                     attributes, events, project_id, agent_id, conversation_id)
  select t, s, p, n, k, sv, sc,
         timestamptz 'epoch' + st * interval '1 microsecond',
         timestamptz 'epoch' + et * interval '1 microsecond',
         d, c, m, coalesce(a, '{}'), coalesce(e, '[]'), pr, ag, cv
    from json_to_recordset($1::json) as r(t text, s text, p text, n text, k text, sv text, sc text,
                                         st bigint, et bigint, d float8, c text, m text,
                                         a jsonb, e jsonb, pr text, ag text, cv text)
  on conflict do nothing`;

const spans = (n: number) =>
  Array.from({ length: Math.ceil(n / 2) }, requestSpans)
    .flat()
    .slice(0, n);

/** The wire row the old insert read (short keys, epoch microseconds). */
function jsonRow(s: AnyReadableSpan): Record<string, unknown> {
  const micros = (t: [number, number]) => t[0] * 1e6 + Math.floor(t[1] / 1e3);
  const attributes = s.attributes as Record<string, unknown>;
  const row: Record<string, unknown> = {
    t: s.spanContext().traceId,
    s: s.spanContext().spanId,
    n: s.name,
    k: s.kind === SpanKind.SERVER ? 'SERVER' : 'CLIENT',
    sv: 'agent-server-api',
    sc: s.instrumentationScope.name,
    st: micros(s.startTime),
    et: micros(s.endTime),
    d: 0.8,
    c: 'UNSET',
    a: attributes,
  };
  if (s.parentSpanContext) row.p = s.parentSpanContext.spanId;
  if (attributes['agent_server.project.id']) row.pr = attributes['agent_server.project.id'];
  return row;
}

/** CPU seconds of one process (utime + stime, clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const scratch = await scratchDatabase('agent_bench_spans');
// A pool of one connection for both ways: the backend whose CPU is read.
const one = createDb(scratch.url, { min: 1, max: 1 });
try {
  const pool = one.client as ConnectionPool;
  const conn = await pool.acquireConnection();
  const pid = (await conn.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  await pool.releaseConnection(conn);

  const exporter = new PostgresSpanExporter(one);
  const copy = (batch: AnyReadableSpan[]) =>
    new Promise<void>((resolve, reject) =>
      exporter.export(batch.map(spanToCopyLine), (r: ExportResult) =>
        r.error ? reject(r.error) : resolve(),
      ),
    );
  const insert = async (batch: AnyReadableSpan[]) => {
    await one.raw(JSON_INSERT.replace('$1', '?'), [JSON.stringify(batch.map(jsonRow))]);
  };

  if (NAME_INDEX) await one.raw('create index on spans (service_name, name, start_time)');
  if (PRIMARY_KEY) {
    await one.raw('drop index spans_trace_id_hash_index');
    await one.raw('drop index spans_workflow_span_unique');
    await one.raw('alter table spans add primary key (trace_id, span_id)');
  }
  if (JSONB)
    await one.raw(`alter table spans
      alter column attributes drop default, alter column attributes type jsonb using attributes::jsonb,
      alter column attributes set default '{}', alter column events drop default,
      alter column events type jsonb using events::jsonb, alter column events set default '[]'`);
  for (let done = 0; done < PREFILL; done += 10_000) await copy(spans(Math.min(10_000, PREFILL - done)));
  await one.raw('vacuum analyze spans');

  const ways = { 'COPY (exporter)': copy, 'insert from json_to_recordset (before)': insert };
  const used = Object.fromEntries(Object.keys(ways).map((k) => [k, [] as number[]]));
  for (let b = 0; b < BATCHES; b++) {
    const order = Object.entries(ways);
    if (b % 2 === 1) order.reverse();
    for (const [name, write] of order) {
      const batch = spans(BATCH);
      const before = cpuSeconds(pid);
      await write(batch);
      used[name]!.push(cpuSeconds(pid) - before);
    }
  }
  const { count } = (await one('spans').count({ count: '*' }))[0] as { count: string };
  console.log(
    `bench/traces span store — ${BATCHES} batches of ${BATCH} spans each way after ${PREFILL} spans prefilled` +
      `${NAME_INDEX ? ', with the (service_name, name, start_time) index' : ''}` +
      `${PRIMARY_KEY ? ', with the (trace_id, span_id) primary key instead of the hash index' : ''}` +
      `${JSONB ? ', with attributes and events as jsonb' : ''} ` +
      `(table now ${count} spans); Postgres backend CPU per span, node ${process.version}, ${new Date().toISOString()}`,
  );
  const perSpan = (k: string) => (used[k]!.reduce((a, x) => a + x, 0) * 1e6) / (BATCHES * BATCH);
  for (const name of Object.keys(ways))
    console.log(`  ${name.padEnd(40)} ${perSpan(name).toFixed(1)} µs/span`);
  const [copyName, insertName] = Object.keys(ways) as [string, string];
  console.log(`  COPY / insert: ${(perSpan(copyName) / perSpan(insertName)).toFixed(2)}`);
} finally {
  await one.destroy();
  await scratch.drop();
}
