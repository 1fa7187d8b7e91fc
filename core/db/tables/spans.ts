import type { Knex } from 'knex';
import type { JsonText } from './columns.js';

export const SpansTableName = 'spans';

/**
 * A finished span of any process (core/telemetry/postgres-exporter.ts writes
 * them in batches). No keys to other tables: spans outlive, and may precede,
 * the rows they mention.
 */
export type DbSpan = {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: string;
  service_name: string;
  scope_name: string | null;
  start_time: Date;
  end_time: Date;
  duration_ms: number;
  status_code: string;
  status_message: string | null;
  /** json (kept as text, not jsonb): read back parsed. */
  attributes: Record<string, unknown>;
  events: unknown[];
  /** Copied out of the attributes so the trace list can filter on them with an index. */
  project_id: string | null;
  agent_id: string | null;
  conversation_id: string | null;
};
export type DbSpanInsert = Pick<
  DbSpan,
  | 'trace_id'
  | 'span_id'
  | 'name'
  | 'kind'
  | 'service_name'
  | 'start_time'
  | 'end_time'
  | 'duration_ms'
  | 'status_code'
> &
  Partial<
    Pick<
      DbSpan,
      'parent_span_id' | 'scope_name' | 'status_message' | 'project_id' | 'agent_id' | 'conversation_id'
    >
  > & { attributes?: DbSpan['attributes'] | JsonText; events?: JsonText };
export type DbSpanUpdate = Partial<DbSpanInsert>;

export type SpansTable = Knex.CompositeTableType<DbSpan, DbSpanInsert, DbSpanUpdate>;
