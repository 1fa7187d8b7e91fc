/**
 * A door's request, span by span, from the traces the platform stores
 * (tracing on, as deployed): every span of the requests whose root span has
 * this name, in the window, as the median start after the root began and the
 * median duration; Postgres queries are named by their statement's start, so
 * the door's own reads stand apart from converse's.
 */
import type { Db } from '../../core/db/knex.js';

export interface SpanLine {
  startMs: number;
  durMs: number;
  /** Spans of this kind per request. */
  perRequest: number;
  what: string;
}

export async function doorSpans(db: Db, rootName: string, from: Date, to: Date): Promise<SpanLine[]> {
  const { rows } = await db.raw<{ rows: Array<Record<string, string | number>> }>(
    `with roots as (
       select trace_id, start_time from spans
        where parent_span_id is null and name = ? and start_time between ? and ?),
     labelled as (
       select s.*, r.start_time as root_start,
              s.service_name || ' ' || case
                when s.name like 'pg.query%' then 'pg ' || left(regexp_replace(coalesce(
                  s.attributes::json->>'db.query.text', s.attributes::json->>'db.statement', ''), '\\s+', ' ', 'g'), 90)
                else s.name end as what
         from spans s join roots r using (trace_id))
     select what, count(*)::float / (select count(*) from roots) as per_request,
            percentile_cont(0.5) within group (order by extract(epoch from (start_time - root_start)) * 1000) as start_ms,
            percentile_cont(0.5) within group (order by duration_ms) as dur_ms
       from labelled group by what order by start_ms`,
    [rootName, from, to],
  );
  return rows.map((r) => ({
    startMs: Number(r.start_ms),
    durMs: Number(r.dur_ms),
    perRequest: Number(r.per_request),
    what: String(r.what),
  }));
}

/** The root span names the requests of a window had (to find a door's). */
export async function rootNames(db: Db, from: Date, to: Date): Promise<string[]> {
  const { rows } = await db.raw<{ rows: Array<{ name: string }> }>(
    `select distinct name from spans where parent_span_id is null and start_time between ? and ?`,
    [from, to],
  );
  return rows.map((r) => r.name);
}
