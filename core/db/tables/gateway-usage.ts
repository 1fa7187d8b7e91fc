import type { Knex } from 'knex';

export const GatewayUsageTableName = 'gateway_usage';

/** One metered model call, by the gateway or an agent. */
export type DbGatewayUsage = {
  /** bigserial. */
  id: number;
  /** Null for a call no key meters (an agent turn in a project without a virtual key). */
  virtual_key_id: string | null;
  provider_id: string | null;
  provider_name: string;
  model: string;
  /** Every prompt token, the cache's included. */
  input_tokens: number;
  output_tokens: number;
  /** Of input_tokens: read from, and written to, the provider's prompt cache. */
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** numeric(18,8), which node-pg reads as text (exact). */
  cost_usd: string;
  latency_ms: number;
  status: number;
  trace_id: string | null;
  created_at: Date;
  /** Stored before the call's outcome, charged at its worst case (see UsageWriter.addProvisional). */
  provisional: boolean;
  /** The budget lease the call was admitted on (gateway_budget_leases), if any. */
  lease_id: string | null;
};
/** Columns with a database default (or nullable) may be left out; the cost is written as a number. */
export type DbGatewayUsageInsert = Pick<
  DbGatewayUsage,
  'virtual_key_id' | 'provider_name' | 'model' | 'status'
> &
  Partial<
    Pick<
      DbGatewayUsage,
      | 'provider_id'
      | 'input_tokens'
      | 'output_tokens'
      | 'cache_read_tokens'
      | 'cache_write_tokens'
      | 'latency_ms'
      | 'trace_id'
      | 'created_at'
      | 'provisional'
      | 'lease_id'
    >
  > & { cost_usd?: number };
export type DbGatewayUsageUpdate = Partial<DbGatewayUsageInsert>;

export type GatewayUsageTable = Knex.CompositeTableType<
  DbGatewayUsage,
  DbGatewayUsageInsert,
  DbGatewayUsageUpdate
>;
