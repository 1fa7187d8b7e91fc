import type { Db } from '../db/knex.js';
import { deleteInChunks } from '../db/prune.js';
import type { DbTraceRollup } from '../db/tables/index.js';

/** One row of `trace_rollups` as a process adds it: every column given, the minute as ISO 8601. */
export type TraceRollupRow = Omit<DbTraceRollup, 'minute'> & { minute: string };

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
  'console',
].join(', ');

const RECORD = `minute timestamptz, service_name text, span_name text, span_kind text, project_id text,
  status text, entry boolean, provider text, model text, virtual_key_id text, console boolean, count bigint,
  sum_ms float8, min_ms float8, max_ms float8, buckets jsonb, input_tokens bigint,
  output_tokens bigint, cost_usd float8`;

const VALUES = `${KEY}, count, sum_ms, min_ms, max_ms, buckets, input_tokens, output_tokens, cost_usd`;

export class TraceRollupsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Adds rows to what is stored: one statement, so a batch counts once or not
   * at all. The rows come as one JSON parameter (no bind-parameter limit).
   * Each key must appear once; callers order the rows by key, the same way on
   * every replica, so two replicas' concurrent upserts lock rows in the same
   * order and cannot deadlock.
   */
  async add(rows: TraceRollupRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.raw(
      `insert into trace_rollups (${VALUES})
       select ${VALUES} from jsonb_to_recordset(?::jsonb) as r(${RECORD})
       on conflict (${KEY}) do update set
         count = trace_rollups.count + excluded.count,
         sum_ms = trace_rollups.sum_ms + excluded.sum_ms,
         min_ms = least(trace_rollups.min_ms, excluded.min_ms),
         max_ms = greatest(trace_rollups.max_ms, excluded.max_ms),
         buckets = trace_rollup_merge(trace_rollups.buckets, excluded.buckets),
         input_tokens = trace_rollups.input_tokens + excluded.input_tokens,
         output_tokens = trace_rollups.output_tokens + excluded.output_tokens,
         cost_usd = case when excluded.cost_usd is null then trace_rollups.cost_usd
                         else coalesce(trace_rollups.cost_usd, 0) + excluded.cost_usd end`,
      [JSON.stringify(rows)],
    );
  }

  /** Retention, as for spans: minutes older than `retentionDays`, in chunks, one replica at a time. */
  prune(retentionDays: number, chunk = 10_000): Promise<number> {
    const cutoff = new Date(Date.now() - retentionDays * 86_400_000);
    return deleteInChunks(
      this.db,
      'agent-server:prune-trace-rollups',
      `delete from trace_rollups where ctid in (select ctid from trace_rollups where minute < ? limit ?)`,
      [cutoff],
      chunk,
    );
  }
}
