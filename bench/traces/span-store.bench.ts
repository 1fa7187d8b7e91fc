/**
 * What storing a span costs Postgres: the exporter's COPY (api/telemetry/
 * postgres-exporter.ts) against the insert it replaced (one json parameter
 * read by json_to_recordset, with ON CONFLICT DO NOTHING), in the same run,
 * on the same table, interleaved. The spans are a gateway request's pair (the
 * HTTP server span and the GenAI client span, with the attributes our code
 * sets). The figure is the Postgres backend's CPU per span (utime + stime from
 * /proc, summed over many batches to get past its 10 ms ticks), so other
 * processes on the machine move it less than they move wall time.
 *
 * BENCH_WITH_NAME_INDEX=true measures with the index dropped by migration
 * 20261123000090 put back. BENCH_PREFILL spans go in first (default 300,000: index inserts cost more in
 * a table that no longer fits in a few pages); BENCH_BATCHES batches of
 * BENCH_BATCH spans each (default 100 × 512: the exporter's default batch).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import { createDb } from '../../api/db/knex.js';
import { PostgresSpanExporter, type ConnectionPool } from '../../api/telemetry/postgres-exporter.js';
import { spanToCopyLine, type AnyReadableSpan } from '../../api/telemetry/span-row.js';
import { scratchDatabase } from '../lib/scratch.js';

const PREFILL = Number(process.env.BENCH_PREFILL ?? 300_000);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 100);
const BATCH = Number(process.env.BENCH_BATCH ?? 512);
/** `true`: put back the (service_name, name, start_time) index that migration 20261123000090 dropped. */
const NAME_INDEX = process.env.BENCH_WITH_NAME_INDEX === 'true';

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
  on conflict (trace_id, span_id) do nothing`;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const PROJECT = '3f1c2b9e-1111-4a5b-9c8d-123456789abc';

function fakeSpan(
  traceId: string,
  spanId: string,
  parent: string | undefined,
  name: string,
  kind: SpanKind,
  scope: string,
  attributes: Record<string, unknown>,
): AnyReadableSpan {
  const now = Date.now();
  const start: [number, number] = [Math.floor(now / 1000), (now % 1000) * 1e6 + 123_456];
  return {
    name,
    kind,
    spanContext: () => ({ traceId, spanId, traceFlags: 1 }),
    parentSpanContext: parent ? { traceId, spanId: parent, traceFlags: 1 } : undefined,
    startTime: start,
    endTime: [start[0], start[1] + 800_000],
    duration: [0, 800_000],
    status: { code: SpanStatusCode.UNSET },
    attributes,
    events: [],
    resource: { attributes: { 'service.name': 'agent-server-api' } },
    instrumentationScope: { name: scope },
  } as unknown as AnyReadableSpan;
}

/** A gateway request's two spans, as our middleware and genai.ts set them. */
function requestSpans(): AnyReadableSpan[] {
  const traceId = hex(16);
  const server = hex(8);
  const path = '/api/gateway/openai/v1/chat/completions';
  return [
    fakeSpan(traceId, server, undefined, `POST ${path}`, SpanKind.SERVER, 'agent-server-http', {
      'http.request.method': 'POST',
      'url.path': path,
      'url.scheme': 'http',
      'network.protocol.version': '1.1',
      'user_agent.original': 'autocannon',
      'client.address': '127.0.0.1',
      'server.port': 3000,
      'http.route': path,
      'http.response.status_code': 200,
    }),
    fakeSpan(traceId, hex(8), server, 'chat gpt-4o-mini', SpanKind.CLIENT, 'agent-server-genai', {
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'openai',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.request.max_tokens': 16,
      'agent_server.project.id': PROJECT,
      'agent_server.virtual_key.id': '9a1c2b9e-2222-4a5b-9c8d-123456789abc',
      'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.response.id': `chatcmpl-${hex(8)}`,
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 16,
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.cost_usd': 0.0000123,
    }),
  ];
}

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
      `${NAME_INDEX ? ', with the (service_name, name, start_time) index' : ''} ` +
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
