import type { Knex } from 'knex';

export const GatewayBudgetLeasesTableName = 'gateway_budget_leases';

/**
 * A slice of a key's budget that one replica spends locally
 * (core/metering/leases.ts). numeric(18,8) columns read as text.
 */
export type DbGatewayBudgetLease = {
  id: string;
  virtual_key_id: string;
  period_start: Date;
  granted_usd: string;
  consumed_usd: string;
  /** Renewed by the replica holding the lease; once past, the next taker returns what is left. */
  expires_at: Date;
};
export type DbGatewayBudgetLeaseInsert = {
  id: string;
  virtual_key_id: string;
  period_start: Date;
  granted_usd: number | string;
  consumed_usd?: number | string;
  expires_at: Date;
};
export type DbGatewayBudgetLeaseUpdate = Partial<
  Pick<DbGatewayBudgetLeaseInsert, 'granted_usd' | 'consumed_usd' | 'expires_at'>
>;

export type GatewayBudgetLeasesTable = Knex.CompositeTableType<
  DbGatewayBudgetLease,
  DbGatewayBudgetLeaseInsert,
  DbGatewayBudgetLeaseUpdate
>;
