import type { Knex } from 'knex';
import type { BudgetScope } from '../../budgets/types.js';

export const BudgetReservationsTableName = 'budget_reservations';
export const BudgetAlertsTableName = 'budget_alerts';

/**
 * A model call's worst case held against an agent's or a conversation's
 * budget while it runs (one per run, step and scope: a retried call replaces
 * its own). numeric as text, bigint as a number.
 */
export type DbBudgetReservation = {
  run_id: string;
  step: number;
  scope: Exclude<BudgetScope, 'key'>;
  scope_id: string;
  usd: string;
  tokens: number;
  expires_at: Date;
};
export type DbBudgetReservationInsert = Omit<DbBudgetReservation, 'usd'> & { usd: number | string };

/** A budget's threshold crossed in one of its periods: `budget.threshold` fires once for it. */
export type DbBudgetAlert = {
  scope: BudgetScope;
  scope_id: string;
  period_start: Date;
  created_at: Date;
};

export type BudgetReservationsTable = Knex.CompositeTableType<
  DbBudgetReservation,
  DbBudgetReservationInsert,
  Partial<DbBudgetReservationInsert>
>;
export type BudgetAlertsTable = Knex.CompositeTableType<
  DbBudgetAlert,
  Omit<DbBudgetAlert, 'created_at'>,
  never
>;
