import type { Knex } from 'knex';
import type { JsonText } from './columns.js';

export const TraceRollupsTableName = 'trace_rollups';

/**
 * Per-minute span counts and latencies (core/telemetry/rollups.ts): the
 * source of the trace statistics. Key columns hold '' for "none".
 */
export type DbTraceRollup = {
  /** The minute the spans started in. */
  minute: Date;
  service_name: string;
  span_name: string;
  span_kind: string;
  project_id: string;
  status: 'ok' | 'error';
  /** An entry span of its service (what /stats/services counts). */
  entry: boolean;
  provider: string;
  model: string;
  virtual_key_id: string;
  /** Counts of the web console's own requests and what ran inside them (left out of the statistics unless asked). */
  console: boolean;
  /** bigint. */
  count: number;
  sum_ms: number;
  min_ms: number;
  max_ms: number;
  /** Bucket index → count (core/telemetry/rollup-histogram.ts). */
  buckets: Record<string, number>;
  input_tokens: number;
  output_tokens: number;
  /** Null while no span of the row carried a cost. */
  cost_usd: number | null;
};
/** Key columns with a default ('') and the token counts may be left out; the minute may be ISO 8601 text. */
export type DbTraceRollupInsert = Omit<
  DbTraceRollup,
  | 'minute'
  | 'project_id'
  | 'provider'
  | 'model'
  | 'virtual_key_id'
  | 'console'
  | 'buckets'
  | 'input_tokens'
  | 'output_tokens'
  | 'cost_usd'
> &
  Partial<
    Pick<
      DbTraceRollup,
      | 'project_id'
      | 'provider'
      | 'model'
      | 'virtual_key_id'
      | 'console'
      | 'input_tokens'
      | 'output_tokens'
      | 'cost_usd'
    >
  > & { minute: Date | string; buckets?: DbTraceRollup['buckets'] | JsonText };
export type DbTraceRollupUpdate = Partial<DbTraceRollupInsert>;

export type TraceRollupsTable = Knex.CompositeTableType<
  DbTraceRollup,
  DbTraceRollupInsert,
  DbTraceRollupUpdate
>;
