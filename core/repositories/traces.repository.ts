import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { SpansTableName, type DbSpan } from '../db/tables/index.js';
import { ATTR, CONSOLE_CLIENT } from '../telemetry/attributes.js';

export interface TimeWindow {
  start: Date;
  end: Date;
}

/** Statistics leave the web console's own requests out unless asked. */
export interface ConsoleChoice {
  includeConsole?: boolean;
}

export interface TraceFilters extends TimeWindow {
  serviceName?: string;
  spanName?: string;
  minDurationMs?: number;
  maxDurationMs?: number;
  hasErrors?: boolean;
  projectId?: string;
  agentId?: string;
  conversationId?: string;
  /** Traces of the web console's own requests too (agent turns started from it are listed either way). */
  includeConsole?: boolean;
  limit: number;
  offset: number;
}

export interface TraceSummaryRow {
  trace_id: string;
  root_span_name: string;
  root_service_name: string;
  start_time: Date;
  end_time: Date;
  duration_ms: number;
  span_count: number;
  error_count: number;
}

/** A span as the trace view shows it. */
export type SpanDbRow = Omit<DbSpan, 'scope_name' | 'project_id' | 'agent_id' | 'conversation_id'>;

/**
 * A group's latency as the rollups hold it: exact count, error count, sum,
 * min and max, and the merged histogram (bucket index → count,
 * core/telemetry/rollup-histogram.ts) the percentiles are read from.
 */
export interface LatencyRow {
  call_count: number;
  error_count: number;
  sum_ms: number;
  min_ms: number;
  max_ms: number;
  buckets: Record<string, number>;
}

export interface ModelRow extends LatencyRow {
  provider: string | null;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
}

/**
 * The statistics read `trace_rollups` (migrations/20261126000010_trace_rollups.ts),
 * never the spans: counts are exact whatever the sampling. A window takes
 * every minute it touches, whole: from the start of start_time's minute to
 * the end of end_time's.
 */
interface RollupFilter {
  /** SQL over the columns of `trace_rollups` aliased `t`. */
  sql: (t: string) => string;
  params: unknown[];
}

function rollupFilter(
  w: TimeWindow & ConsoleChoice,
  extra: Array<[column: string, value: unknown]>,
  raw = '',
): RollupFilter {
  const present = extra.filter(([, v]) => v !== undefined);
  return {
    sql: (t) =>
      [
        `${t}.minute >= date_trunc('minute', ?::timestamptz) and ${t}.minute <= ?`,
        ...present.map(([c]) => `${t}.${c} = ?`),
        ...(raw ? [raw.replaceAll('$t', t)] : []),
        ...(w.includeConsole ? [] : [`not ${t}.console`]),
      ].join(' and '),
    params: [w.start, w.end, ...present.map(([, v]) => v)],
  };
}

/**
 * The groups of `f`'s rows by `groupBy` (ordered by `orderBy`, paged by
 * `page`), each with its exact counts, sums and extremes, and its merged
 * histogram: the bucket counts of its rows added per index in one pass over
 * the window (only for the groups of the page).
 */
async function rollupGroups<T>(
  db: Db,
  f: RollupFilter,
  groupBy: string[],
  orderBy: string,
  extraColumns = '',
  page?: { limit: number; offset: number },
): Promise<T[]> {
  const cols = groupBy.join(', ');
  const match = (a: string, b: string) => groupBy.map((c) => `${a}.${c} = ${b}.${c}`).join(' and ');
  const { rows } = await db.raw<{ rows: T[] }>(
    `with g as (
       select ${cols},
              sum(t.count)::float8 as call_count,
              coalesce(sum(t.count) filter (where t.status = 'error'), 0)::float8 as error_count,
              sum(t.sum_ms)::float8 as sum_ms,
              min(t.min_ms)::float8 as min_ms,
              max(t.max_ms)::float8 as max_ms${extraColumns}
         from trace_rollups t
        where ${f.sql('t')}
        group by ${cols}
        order by ${orderBy}
        ${page ? 'limit ? offset ?' : ''}),
     h as (
       select ${groupBy.map((c) => `g.${c}`).join(', ')}, e.key, sum(e.value::bigint) as n
         from trace_rollups t
         join g on ${match('t', 'g')}
        cross join jsonb_each_text(t.buckets) e
        where ${f.sql('t')}
        group by ${groupBy.map((c) => `g.${c}`).join(', ')}, e.key),
     b as (select ${cols}, jsonb_object_agg(key, n) as buckets from h group by ${cols})
     select g.*, coalesce(b.buckets, '{}'::jsonb) as buckets
       from g left join b on ${match('b', 'g')}
      order by ${orderBy}`,
    [...f.params, ...(page ? [page.limit, page.offset] : []), ...f.params] as Knex.RawBinding[],
  );
  return rows;
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export class TracesRepository {
  constructor(private readonly db: Db) {}

  /**
   * One row per trace that started in the window. Spans of a trace start at or
   * after its first span, so only spans from the window start are read.
   */
  async listTraces(f: TraceFilters): Promise<TraceSummaryRow[]> {
    const where: string[] = ['s.start_time >= ?'];
    const params: unknown[] = [f.start];
    for (const [column, value] of [
      ['project_id', f.projectId],
      ['agent_id', f.agentId],
      ['conversation_id', f.conversationId],
    ] as const) {
      if (value === undefined) continue;
      where.push(`s.trace_id in (select trace_id from spans where ${column} = ? and start_time >= ?)`);
      params.push(value, f.start);
    }
    const having: string[] = ['min(s.start_time) <= ?'];
    params.push(f.end);
    if (f.serviceName !== undefined) {
      having.push('bool_or(s.service_name = ?)');
      params.push(f.serviceName);
    }
    if (f.spanName !== undefined) {
      having.push(`bool_or(s.name ilike ? escape '\\')`);
      params.push(`%${escapeLike(f.spanName)}%`);
    }
    const duration = 'extract(epoch from (max(s.end_time) - min(s.start_time))) * 1000';
    if (f.minDurationMs !== undefined) {
      having.push(`${duration} >= ?`);
      params.push(f.minDurationMs);
    }
    if (f.maxDurationMs !== undefined) {
      having.push(`${duration} <= ?`);
      params.push(f.maxDurationMs);
    }
    if (f.hasErrors !== undefined) {
      having.push(`(count(*) filter (where s.status_code = 'ERROR') > 0) = ?`);
      params.push(f.hasErrors);
    }
    // The console's own requests (its root says so, tracing middleware) are noise beside the
    // traffic it shows, except agent turns started from it (the playground), which name an agent.
    if (!f.includeConsole)
      having.push(
        `not (bool_or(s.parent_span_id is null and coalesce(s.attributes->>'${ATTR.client}', '') = '${CONSOLE_CLIENT}')` +
          ' and not bool_or(s.agent_id is not null))',
      );
    params.push(f.limit, f.offset);
    const { rows } = await this.db.raw<{ rows: TraceSummaryRow[] }>(
      `with t as (
         select s.trace_id, min(s.start_time) as start_time, max(s.end_time) as end_time,
                ${duration} as duration_ms, count(*)::int as span_count,
                (count(*) filter (where s.status_code = 'ERROR'))::int as error_count
           from spans s
          where ${where.join(' and ')}
          group by s.trace_id
         having ${having.join(' and ')}
          order by min(s.start_time) desc, s.trace_id
          limit ? offset ?)
       select t.trace_id, r.name as root_span_name, r.service_name as root_service_name,
              t.start_time, t.end_time, t.duration_ms::float8 as duration_ms, t.span_count, t.error_count
         from t
         cross join lateral (
           select name, service_name from spans r
            where r.trace_id = t.trace_id
            order by (r.parent_span_id is null) desc, r.start_time, r.span_id
            limit 1) r
        order by t.start_time desc, t.trace_id`,
      params as Knex.RawBinding[],
    );
    return rows;
  }

  async spansOf(traceId: string): Promise<SpanDbRow[]> {
    return this.db(SpansTableName)
      .where({ trace_id: traceId })
      .orderBy([{ column: 'start_time' }, { column: 'span_id' }])
      .select(
        'trace_id',
        'span_id',
        'parent_span_id',
        'name',
        'kind',
        'service_name',
        'start_time',
        'end_time',
        'duration_ms',
        'status_code',
        'status_message',
        'attributes',
        'events',
      );
  }

  async endpointStats(
    w: TimeWindow &
      ConsoleChoice & { serviceName?: string; spanKind?: string; limit: number; offset: number },
  ): Promise<Array<LatencyRow & { service_name: string; span_name: string }>> {
    const f = rollupFilter(w, [
      ['service_name', w.serviceName],
      ['span_kind', w.spanKind],
    ]);
    return rollupGroups(
      this.db,
      f,
      ['service_name', 'span_name'],
      'call_count desc, service_name, span_name',
      '',
      w,
    );
  }

  /**
   * Per service, over its entry spans (`isEntrySpan` in
   * core/telemetry/rollup-aggregator.ts: HTTP requests for the api, workflow
   * runs and handlers for the worker). Counting every span would average
   * queries with requests.
   */
  async serviceStats(w: TimeWindow & ConsoleChoice): Promise<Array<LatencyRow & { service_name: string }>> {
    const f = rollupFilter(w, [], '$t.entry');
    return rollupGroups(this.db, f, ['service_name'], 'call_count desc, service_name');
  }

  /**
   * Model calls: CLIENT spans carrying `gen_ai.request.model` (core/telemetry/genai.ts),
   * per provider (`gen_ai.provider.name`, else `gen_ai.system`) and model. Cost is
   * null when no call of the group carried one.
   */
  async modelStats(w: TimeWindow & ConsoleChoice & { projectId?: string }): Promise<ModelRow[]> {
    const f = rollupFilter(w, [['project_id', w.projectId]], "$t.model <> ''");
    const rows = await rollupGroups<ModelRow>(
      this.db,
      f,
      ['provider', 'model'],
      'call_count desc, provider, model',
      `,
              sum(t.input_tokens)::float8 as input_tokens,
              sum(t.output_tokens)::float8 as output_tokens,
              sum(t.cost_usd)::float8 as cost_usd`,
    );
    // '' in the key means none.
    return rows.map((r) => ({ ...r, provider: r.provider || null }));
  }
}
