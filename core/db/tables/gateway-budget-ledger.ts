import type { Knex } from 'knex';

export const GatewayBudgetLedgerTableName = 'gateway_budget_ledger';

/**
 * A virtual key's budget in one period: what was spent and what calls in
 * flight and leases hold reserved. numeric(18,8), which node-pg reads as
 * text (exact); a write may send a number.
 */
export type DbGatewayBudgetLedger = {
  virtual_key_id: string;
  period_start: Date;
  spent_usd: string;
  reserved_usd: string;
};
export type DbGatewayBudgetLedgerInsert = {
  virtual_key_id: string;
  period_start: Date;
  spent_usd?: number | string;
  reserved_usd?: number | string;
};
export type DbGatewayBudgetLedgerUpdate = Partial<
  Pick<DbGatewayBudgetLedgerInsert, 'spent_usd' | 'reserved_usd'>
>;

export type GatewayBudgetLedgerTable = Knex.CompositeTableType<
  DbGatewayBudgetLedger,
  DbGatewayBudgetLedgerInsert,
  DbGatewayBudgetLedgerUpdate
>;
