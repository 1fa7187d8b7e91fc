/**
 * The agent and conversation budgets' figures and reservations. What a
 * budget's period spent is summed from its runs (each run's cost and tokens,
 * stored as its calls settle; a run counts in the period it began in); what
 * calls in flight hold is in `budget_reservations`. Reservations are made
 * under a transaction-scoped advisory lock per budget, so concurrent calls
 * on any replica cannot together pass it.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import type { BudgetInEffect, BudgetNeed, BudgetPeriodUse, BudgetScope } from '../budgets/types.js';
import { fits, type ScopeBudget } from '../budgets/types.js';
import type { DbRun } from '../db/tables/index.js';
import { PERIOD_SQL, type BudgetPeriod } from './metering.repository.js';

/** The period's start and the next one's, in SQL. */
function periodBounds(period: BudgetPeriod): { start: string; next: string } {
  const start = PERIOD_SQL[period];
  return { start, next: period === 'total' ? 'null::timestamptz' : `${start} + interval '1 ${period}'` };
}

const SCOPE_COLUMN: Record<Exclude<BudgetScope, 'key'>, string> = {
  agent: 'agent_id',
  conversation: 'conversation_pk',
};

type ScopedBudget = BudgetInEffect & { scope: Exclude<BudgetScope, 'key'> };

/** A reservation to hold, or the budget it did not fit in with that budget's figures. */
export type ReserveOutcome =
  | { ok: true; uses: Array<{ budget: ScopedBudget; use: BudgetPeriodUse }> }
  | { ok: false; budget: ScopedBudget; use: BudgetPeriodUse };

/** A run's agent and conversation budgets as they are now, and the agent's wait timeout. */
export interface RunBudgets {
  agent_budget: ScopeBudget | null;
  conversation_budget: ScopeBudget | null;
  /** The conversation's id as the API names it. */
  conversation_id: string;
  budget_wait_timeout_ms: number | null;
}

/** RunBudgets of run `r`, as a subquery (TurnsRepository.startRow reads it with the rest of a step's start). */
export const RUN_BUDGETS_SQL = `(select jsonb_build_object('agent_budget', ab.budget, 'conversation_budget', cb.budget,
           'conversation_id', cb.id, 'budget_wait_timeout_ms', ab.budget_wait_timeout_ms)
      from conversations cb left join agents ab on ab.id = r.agent_id where cb.pk = r.conversation_pk)`;

export class BudgetsRepository {
  constructor(private readonly db: Db) {}

  /** The run's budgets as they are now (read live at each model call: a raise applies to the next one). */
  async runBudgets(runId: string): Promise<RunBudgets | undefined> {
    const { rows } = await this.db.raw<{ rows: Array<{ b: RunBudgets | null }> }>(
      `select ${RUN_BUDGETS_SQL} as b from runs r where r.id = ?`,
      [runId],
    );
    return rows[0]?.b ?? undefined;
  }

  /**
   * The budget's current period: its runs' cost and tokens, and what other
   * calls hold reserved (`except` one run's step: a retried call's own).
   */
  async use(
    b: ScopedBudget,
    except?: { runId: string; step: number },
    q: Knex = this.db,
  ): Promise<BudgetPeriodUse> {
    const { start, next } = periodBounds(b.budget.period);
    const column = SCOPE_COLUMN[b.scope];
    // The scope's own runs, and its sub-agents' runs (which carry their callers' scopes).
    const spentBy = `(r.${column} = ? or (r.budget_scopes <> '[]'::jsonb and r.budget_scopes @> ?::jsonb))`;
    const spentArgs = [b.scope_id, JSON.stringify([{ scope: b.scope, scope_id: b.scope_id }])];
    const { rows } = await q.raw<{
      rows: Array<{
        period_start: Date;
        resets_at: Date | null;
        spent_usd: number;
        spent_tokens: number;
        reserved_usd: number;
        reserved_tokens: number;
      }>;
    }>(
      `select ${start} as period_start, ${next} as resets_at,
         coalesce((select sum((r.usage->>'cost_usd')::numeric) from runs r
                    where ${spentBy} and r.created_at >= ${start}), 0)::float8 as spent_usd,
         coalesce((select sum(coalesce((r.usage->>'input_tokens')::bigint, 0) + coalesce((r.usage->>'output_tokens')::bigint, 0))
                     from runs r where ${spentBy} and r.created_at >= ${start}), 0)::float8 as spent_tokens,
         coalesce(sum(b.usd), 0)::float8 as reserved_usd,
         coalesce(sum(b.tokens), 0)::float8 as reserved_tokens
       from (select 1) one
       left join budget_reservations b on b.scope = ? and b.scope_id = ? and b.expires_at > now()
         and not (b.run_id = ? and b.step = ?)`,
      [...spentArgs, ...spentArgs, b.scope, b.scope_id, except?.runId ?? null, except?.step ?? -1],
    );
    return rows[0]!;
  }

  /**
   * Holds `need` against every budget for the run's step, or none of them:
   * the first budget it does not fit in is returned with its figures. A
   * retried step replaces its own reservation.
   */
  async reserve(
    runId: string,
    step: number,
    budgets: ScopedBudget[],
    need: BudgetNeed,
    ttlMs: number,
  ): Promise<ReserveOutcome> {
    const ordered = [...budgets].sort((a, b) =>
      `${a.scope}/${a.scope_id}`.localeCompare(`${b.scope}/${b.scope_id}`),
    );
    return this.db.transaction(async (trx) => {
      const uses: Array<{ budget: ScopedBudget; use: BudgetPeriodUse }> = [];
      for (const budget of ordered) {
        await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [
          `budget/${budget.scope}/${budget.scope_id}`,
        ]);
        const use = await this.use(budget, { runId, step }, trx);
        if (!fits(budget.budget, use, need)) return { ok: false as const, budget, use };
        uses.push({ budget, use });
      }
      const expires = new Date(Date.now() + ttlMs);
      for (const { budget } of uses)
        await trx('budget_reservations')
          .insert({
            run_id: runId,
            step,
            scope: budget.scope,
            scope_id: budget.scope_id,
            usd: need.usd,
            tokens: need.tokens,
            expires_at: expires,
          })
          .onConflict(['run_id', 'step', 'scope', 'scope_id'])
          .merge(['usd', 'tokens', 'expires_at']);
      return { ok: true as const, uses };
    });
  }

  /** Lets go of the run's reservations (of one step, or all of them when its turn ends). */
  async release(runId: string, step?: number, q: Knex = this.db): Promise<void> {
    const rows = q('budget_reservations').where('run_id', runId);
    if (step !== undefined) rows.where('step', step);
    await rows.delete();
  }

  /** Deletes reservations past their expiry (left by workers that died; they hold nothing any more). */
  async pruneExpired(): Promise<number> {
    return this.db('budget_reservations').where('expires_at', '<', this.db.fn.now()).delete();
  }

  /** Records the budget's threshold crossing in its period; false when it was already recorded (it fires once). */
  async claimAlert(scope: BudgetScope, scopeId: string, periodStart: Date): Promise<boolean> {
    const rows = await this.db('budget_alerts')
      .insert({ scope, scope_id: scopeId, period_start: periodStart })
      .onConflict(['scope', 'scope_id', 'period_start'])
      .ignore()
      .returning('scope');
    return rows.length > 0;
  }

  /** The budget of an agent (by id), a conversation (by pk) or a key (by id) as it is now; null: none. */
  async budgetOf(scope: BudgetScope, id: string): Promise<ScopeBudget | null> {
    const row =
      scope === 'agent'
        ? await this.db('agents').where({ id }).first('budget')
        : scope === 'conversation'
          ? await this.db('conversations').where({ pk: id }).first('budget')
          : await this.db('virtual_keys').where({ id }).first('budget');
    return row?.budget ?? null;
  }

  /** A conversation's pk, named as the API names it. */
  async conversationPk(projectId: string, conversationId: string): Promise<string | undefined> {
    const row = await this.db('conversations')
      .where({ project_id: projectId, id: conversationId })
      .first('pk');
    return row?.pk;
  }

  /** Runs waiting for the budget of this scope (its pause names it). */
  waitingOn(
    scope: BudgetScope,
    scopeId: string,
  ): Promise<Array<Pick<DbRun, 'id' | 'workflow_id' | 'pause'>>> {
    return this.db('runs')
      .select('id', 'workflow_id', 'pause')
      .where('status', 'awaiting_budget')
      .whereRaw(`pause->'details'->>'scope' = ? and pause->'details'->>'scope_id' = ?`, [scope, scopeId]);
  }
}
