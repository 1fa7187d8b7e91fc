/**
 * Budgets that pause runs: an agent's, a conversation's and the project's
 * virtual key's. A turn reserves each model call's worst case against every
 * budget in effect; one that does not fit makes the run wait
 * (`awaiting_budget`) until the budget is raised, its next period begins or
 * a person decides. Pure types and figures, shared by the api and the worker.
 */
/** A budget's period: what it counts restarts at each one's beginning (`total`: never). */
export type BudgetPeriod = 'day' | 'week' | 'month' | 'total';

export const BUDGET_PERIODS = ['day', 'week', 'month', 'total'] as const satisfies readonly BudgetPeriod[];

/** The share of a budget whose crossing fires `budget.threshold` when none is set. */
export const DEFAULT_ALERT_AT = 0.8;

/** An agent's or a conversation's budget, as stored and as the API takes it. */
export interface ScopeBudget {
  max_usd: number;
  max_tokens?: number | null;
  period: BudgetPeriod;
  /** The share (0–1] whose crossing fires `budget.threshold`; DEFAULT_ALERT_AT when absent. */
  alert_at?: number | null;
}

export type BudgetScope = 'agent' | 'conversation' | 'key';

/** A budget a turn's model calls count against. `scope_id`: the agent's id, the conversation's pk, the key's id. */
export interface BudgetInEffect {
  scope: BudgetScope;
  scope_id: string;
  budget: ScopeBudget;
}

/** What a model call asks of the budgets: its worst-case cost and tokens. */
export interface BudgetNeed {
  usd: number;
  tokens: number;
}

/** One budget's current period: what runs spent and what calls in flight hold. */
export interface BudgetPeriodUse {
  period_start: Date;
  /** When the next period begins (null for `total`). */
  resets_at: Date | null;
  spent_usd: number;
  spent_tokens: number;
  reserved_usd: number;
  reserved_tokens: number;
}

/** The budget a call did not fit in, as a waiting run's pause shows it. */
export interface BudgetShortfall {
  scope: BudgetScope;
  /** The agent's id, the conversation's id (the client's), the key's id. */
  id: string;
  period: BudgetPeriod;
  max_usd: number;
  max_tokens: number | null;
  spent_usd: number;
  spent_tokens: number;
  reserved_usd: number;
  needed_usd: number;
  needed_tokens: number;
  /** When the budget's next period begins and the run tries again (null: `total`, never). */
  resets_at: string | null;
}

/** Whether `need` fits in the budget's period beside what is spent and reserved. */
export function fits(budget: ScopeBudget, use: BudgetPeriodUse, need: BudgetNeed): boolean {
  const usd = use.spent_usd + use.reserved_usd + need.usd;
  if (usd > budget.max_usd + 1e-9) return false;
  const max = budget.max_tokens;
  return max === undefined || max === null || use.spent_tokens + use.reserved_tokens + need.tokens <= max;
}

/** Whether the period, with `need` added, reaches the budget's alert share. */
export function crossesAlert(budget: ScopeBudget, use: BudgetPeriodUse, need: BudgetNeed): boolean {
  const at = budget.alert_at ?? DEFAULT_ALERT_AT;
  const usd = use.spent_usd + use.reserved_usd + need.usd;
  if (usd >= at * budget.max_usd) return true;
  const max = budget.max_tokens;
  return (
    max !== undefined && max !== null && use.spent_tokens + use.reserved_tokens + need.tokens >= at * max
  );
}
