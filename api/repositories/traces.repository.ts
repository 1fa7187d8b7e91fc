import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';

export interface TimeWindow {
  start: Date;
  end: Date;
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

export interface SpanDbRow {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: string;
  service_name: string;
  start_time: Date;
  end_time: Date;
  duration_ms: number;
  status_code: string;
  status_message: string | null;
  attributes: Record<string, unknown>;
  events: unknown[];
}

export interface LatencyRow {
  call_count: number;
  error_count: number;
  avg_ms: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  max_ms: number;
}

export interface ModelRow {
  provider: string | null;
  model: string;
  call_count: number;
  error_count: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
  p50_ms: number;
  p95_ms: number;
}

/**
 * Percentiles are `percentile_cont`: linear interpolation between the two
 * nearest durations (what numpy and most dashboards call p95), so p50 of
 * 10, 20 is 15 rather than one of the observed values.
 */
const latencyColumns = (col = 'duration_ms') => `
  count(*)::int as call_count,
  (count(*) filter (where status_code = 'ERROR'))::int as error_count,
  avg(${col}) as avg_ms,
  percentile_cont(0.5) within group (order by ${col}) as p50_ms,
  percentile_cont(0.95) within group (order by ${col}) as p95_ms,
  percentile_cont(0.99) within group (order by ${col}) as p99_ms,
  max(${col}) as max_ms`;

/** A numeric attribute, or null when absent or not a number (a bad attribute must not fail the query). */
const numAttr = (key: string) =>
  `case when jsonb_typeof(attributes->'${key}') = 'number' then (attributes->>'${key}')::numeric end`;

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
    return this.db('spans')
      .where({ trace_id: traceId })
      .orderBy([{ column: 'start_time' }, { column: 'span_id' }])
      .select<SpanDbRow[]>(
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
    w: TimeWindow & { serviceName?: string; spanKind?: string; limit: number; offset: number },
  ): Promise<Array<LatencyRow & { service_name: string; span_name: string }>> {
    const where = ['start_time >= ?', 'start_time <= ?'];
    const params: unknown[] = [w.start, w.end];
    if (w.serviceName !== undefined) {
      where.push('service_name = ?');
      params.push(w.serviceName);
    }
    if (w.spanKind !== undefined) {
      where.push('kind = ?');
      params.push(w.spanKind);
    }
    params.push(w.limit, w.offset);
    const { rows } = await this.db.raw<{
      rows: Array<LatencyRow & { service_name: string; span_name: string }>;
    }>(
      `select service_name, name as span_name, ${latencyColumns()}
         from spans where ${where.join(' and ')}
        group by service_name, name
        order by call_count desc, service_name, span_name
        limit ? offset ?`,
      params as Knex.RawBinding[],
    );
    return rows;
  }

  /**
   * Per service, over its entry spans: those whose parent is absent or in
   * another service (an HTTP request for the api; a workflow run or update
   * for the worker). Counting every span would average queries with requests.
   */
  async serviceStats(w: TimeWindow): Promise<Array<LatencyRow & { service_name: string }>> {
    const { rows } = await this.db.raw<{ rows: Array<LatencyRow & { service_name: string }> }>(
      `select s.service_name, ${latencyColumns('s.duration_ms').replaceAll('status_code', 's.status_code')}
         from spans s
         left join spans p on p.trace_id = s.trace_id and p.span_id = s.parent_span_id
        where s.start_time >= ? and s.start_time <= ?
          and (p.span_id is null or p.service_name <> s.service_name)
        group by s.service_name
        order by call_count desc, s.service_name`,
      [w.start, w.end],
    );
    return rows;
  }

  /**
   * Model-call spans (CLIENT spans carrying `gen_ai.request.model`, see api/telemetry/genai.ts).
   * Attributes are stored as json (cheap to write, migration 20261123000110): each CLIENT span
   * of the window is cast to jsonb once, rather than its text re-parsed for every key read
   * (`offset 0` keeps the planner from inlining the cast into each use).
   */
  async modelStats(w: TimeWindow & { projectId?: string }): Promise<ModelRow[]> {
    const params: unknown[] = [w.start, w.end];
    let project = '';
    if (w.projectId !== undefined) {
      project = 'and project_id = ?';
      params.push(w.projectId);
    }
    const { rows } = await this.db.raw<{ rows: ModelRow[] }>(
      `select coalesce(attributes->>'gen_ai.provider.name', attributes->>'gen_ai.system') as provider,
              attributes->>'gen_ai.request.model' as model,
              count(*)::int as call_count,
              (count(*) filter (where status_code = 'ERROR'))::int as error_count,
              coalesce(sum(${numAttr('gen_ai.usage.input_tokens')}), 0)::float8 as input_tokens,
              coalesce(sum(${numAttr('gen_ai.usage.output_tokens')}), 0)::float8 as output_tokens,
              sum(${numAttr('gen_ai.usage.cost_usd')})::float8 as cost_usd,
              percentile_cont(0.5) within group (order by duration_ms) as p50_ms,
              percentile_cont(0.95) within group (order by duration_ms) as p95_ms
         from (select attributes::jsonb as attributes, status_code, duration_ms
                 from spans
                where start_time >= ? and start_time <= ? ${project} and kind = 'CLIENT'
               offset 0) s
        where attributes->>'gen_ai.request.model' is not null
        group by 1, 2
        order by call_count desc, provider, model`,
      params as Knex.RawBinding[],
    );
    return rows;
  }
}
