import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import type { DbGatewayBudgetLedger, DbGatewayRateWindow } from '../db/tables/index.js';
import { PERIOD_SQL, type BudgetPeriod } from './metering.repository.js';

/** What a replica asks for when it takes a lease of a key's limits. */
export interface LeaseRequest {
  keyId: string;
  /** The new budget lease's row id. */
  leaseId: string;
  ttlMs: number;
  /**
   * A slice of the current minute window: requests (rpm) and a token
   * allowance (tpm; at least `needTokens`, what the asking call reserves, up
   * to `wantTokens`); null: no such limit.
   */
  window?: {
    rpm: number | null;
    tpm: number | null;
    wantRequests: number;
    needTokens: number;
    wantTokens: number;
  };
  /** A slice of the budget: at least `needUsd` (the call that asks), up to `wantUsd`. */
  budget?: { period: BudgetPeriod; maxUsd: number; needUsd: number; wantUsd: number };
  /** What is left of the replica's previous lease, given back in the same transaction. */
  giveBack?: GiveBack;
}

export interface GiveBack {
  window?: { start: Date; requests: number; tokens: number };
  budget?: { leaseId: string; usd: number };
}

export type LeaseAnswer =
  | {
      granted: true;
      /** Requests and tokens of the window granted (null: that limit is not set). */
      window?: { start: Date; requests: number | null; tokens: number | null; leftMs: number };
      budget?: { periodStart: Date; usd: number; leftMs: number | null };
    }
  | {
      granted: false;
      refusal: 'requests_per_minute' | 'tokens_per_minute' | 'budget';
      retryAfterSeconds: number;
    };

/** The key's current window, locked, with the milliseconds until it ends. */
type WindowRow = Pick<DbGatewayRateWindow, 'window_start' | 'requests' | 'tokens'> & { left_ms: number };
/** The key's current budget period, locked, with the milliseconds until it ends (null: `total`). */
type LedgerRow = Pick<DbGatewayBudgetLedger, 'period_start' | 'spent_usd' | 'reserved_usd'> & {
  left_ms: number | null;
};

/** A slice is at most this share of what is left, so two replicas both get some of a nearly used limit. */
const SHARE = 4;

/**
 * Taking leases of a key's rate limit and budget (core/metering/leases.ts
 * has the rules; CounterChanges in metering.repository.ts writes what they
 * consume and gives them back). One transaction per lease: a replica takes
 * one every few hundred calls, so clarity wins over round trips here. Rows
 * are locked in the order every counter statement uses: window, leases, ledger.
 */
export class LeaseRepository {
  constructor(private readonly db: Db) {}

  acquire(req: LeaseRequest): Promise<LeaseAnswer> {
    return this.db.transaction(async (trx) => {
      await trx.raw("select set_config('synchronous_commit', 'off', true)");
      const window = req.window ? await this.lockWindow(trx, req.keyId, req.giveBack?.window) : undefined;
      const ledger = req.budget
        ? await this.lockLedger(trx, req.keyId, req.budget.period, req.giveBack?.budget)
        : undefined;
      const refusal = refuse(req, window, ledger);
      if (refusal) return refusal;
      return {
        granted: true as const,
        window: window && (await this.grantWindow(trx, req, window)),
        budget: ledger && (await this.grantBudget(trx, req, ledger)),
      };
    });
  }

  /** Gives back the previous lease's unused requests and tokens, then locks and reads the current window. */
  private async lockWindow(trx: Knex.Transaction, keyId: string, back: GiveBack['window']) {
    if (back)
      await trx.raw(
        `update gateway_rate_windows set requests = greatest(requests - ?, 0), tokens = greatest(tokens - ?, 0)
          where virtual_key_id = ? and window_start = ?`,
        [back.requests, back.tokens, keyId, back.start],
      );
    // `do update` with no change: the row locked and returned, created if needed.
    const { rows } = await trx.raw<{ rows: WindowRow[] }>(
      `insert into gateway_rate_windows as w (virtual_key_id, window_start, requests)
         values (?, date_trunc('minute', now()), 0)
       on conflict (virtual_key_id, window_start) do update set requests = w.requests
       returning window_start, requests, tokens,
         extract(epoch from (window_start + interval '1 minute' - now())) * 1000 as left_ms`,
      [keyId],
    );
    return rows[0]!;
  }

  /**
   * Returns expired leases of the key (their replicas died) and what the
   * previous lease gives back to the ledger, then locks and reads the
   * current period's ledger row. What a dead replica's calls cost but it had
   * not yet written to its lease is read from their usage rows (stored
   * before each answer, a call in flight at its worst case) and charged.
   */
  private async lockLedger(
    trx: Knex.Transaction,
    keyId: string,
    period: BudgetPeriod,
    back: GiveBack['budget'],
  ) {
    await trx.raw(
      `with shrunk as (
         update gateway_budget_leases set granted_usd = granted_usd - ?::numeric
          where id = ? and virtual_key_id = ? returning period_start, ?::numeric as usd),
       expired as (
         delete from gateway_budget_leases
          where virtual_key_id = ? and expires_at < now() and id is distinct from ?
          returning id, period_start, granted_usd - consumed_usd as usd, consumed_usd),
       unwritten as (
         select e.period_start, greatest(coalesce(sum(u.cost_usd), 0) - e.consumed_usd, 0) as usd
           from expired e left join gateway_usage u on u.lease_id = e.id
          group by e.id, e.period_start, e.consumed_usd),
       back as (select period_start, sum(usd) as usd, sum(spent) as spent from (
         select period_start, usd, 0 as spent from shrunk
         union all select period_start, usd, 0 from expired
         union all select period_start, 0, usd from unwritten) t group by period_start)
       update gateway_budget_ledger g
          set reserved_usd = greatest(g.reserved_usd - back.usd, 0), spent_usd = g.spent_usd + back.spent
         from back where g.virtual_key_id = ? and g.period_start = back.period_start`,
      [back?.usd ?? 0, back?.leaseId ?? null, keyId, back?.usd ?? 0, keyId, back?.leaseId ?? null, keyId],
    );
    const start = PERIOD_SQL[period];
    const end =
      period === 'total' ? 'null' : `extract(epoch from (${start} + interval '1 ${period}' - now())) * 1000`;
    const { rows } = await trx.raw<{ rows: LedgerRow[] }>(
      `insert into gateway_budget_ledger as l (virtual_key_id, period_start) values (?, ${start})
       on conflict (virtual_key_id, period_start) do update set reserved_usd = l.reserved_usd
       returning period_start, spent_usd, reserved_usd, ${end} as left_ms`,
      [keyId],
    );
    return rows[0]!;
  }

  private async grantWindow(trx: Knex.Transaction, req: LeaseRequest, w: WindowRow) {
    const { rpm, tpm, wantRequests, needTokens, wantTokens } = req.window!;
    const requests = rpm === null ? null : countSlice(wantRequests, rpm - w.requests);
    // The asking call's reservation in full (refuse made sure it fits in what is left).
    const tokens =
      tpm === null ? null : countSlice(wantTokens, tpm - Number(w.tokens), Math.max(1, needTokens));
    await trx.raw(
      `update gateway_rate_windows set requests = requests + ?, tokens = tokens + ?
        where virtual_key_id = ? and window_start = ?`,
      [requests ?? 0, tokens ?? 0, req.keyId, w.window_start],
    );
    return { start: w.window_start, requests, tokens, leftMs: Number(w.left_ms) };
  }

  private async grantBudget(trx: Knex.Transaction, req: LeaseRequest, l: LedgerRow) {
    const { maxUsd, needUsd, wantUsd } = req.budget!;
    const room = maxUsd - Number(l.spent_usd) - Number(l.reserved_usd);
    // Never more than is left, but the asking call's need (within float error of what is left) in full.
    const usd = Math.min(Math.max(room, needUsd), slice(wantUsd, room, needUsd));
    await trx.raw(
      `with l as (update gateway_budget_ledger set reserved_usd = reserved_usd + ?::numeric
                   where virtual_key_id = ? and period_start = ? returning 1)
       insert into gateway_budget_leases (id, virtual_key_id, period_start, granted_usd, expires_at)
       select ?, ?, ?, ?::numeric, now() + ?::int * interval '1 millisecond' from l`,
      [usd, req.keyId, l.period_start, req.leaseId, req.keyId, l.period_start, usd, req.ttlMs],
    );
    return { periodStart: l.period_start, usd, leftMs: l.left_ms === null ? null : Number(l.left_ms) };
  }

  /** Keeps the replica's leases alive: a lease not renewed for its TTL is returned by the next taker. */
  async renew(ids: string[], ttlMs: number): Promise<void> {
    if (ids.length === 0) return;
    await this.db.raw(
      `update gateway_budget_leases set expires_at = now() + ?::int * interval '1 millisecond'
        where id = any(?::uuid[])`,
      [ttlMs, ids],
    );
  }
}

/** The slice granted: `want`, but at most a share of what is left; at least `least` (what the asking call needs). */
function slice(want: number, left: number, least: number): number {
  return Math.max(least, Math.min(want, left / SHARE));
}

/** The same in whole requests or tokens: at least `least` (one by default). */
const countSlice = (want: number, left: number, least = 1) => Math.floor(slice(want, left, least));

function refuse(
  req: LeaseRequest,
  w: WindowRow | undefined,
  l: LedgerRow | undefined,
): LeaseAnswer | undefined {
  const retry = (ms: number | null) => Math.max(1, Math.ceil((ms ?? 1000) / 1000));
  if (w && req.window) {
    const { rpm, tpm } = req.window;
    if (rpm !== null && w.requests >= rpm)
      return { granted: false, refusal: 'requests_per_minute', retryAfterSeconds: retry(Number(w.left_ms)) };
    // Tokens count what every call admitted in the window reserved (in flight) or used (settled).
    if (tpm !== null && Number(w.tokens) + Math.max(1, req.window.needTokens) > tpm)
      return { granted: false, refusal: 'tokens_per_minute', retryAfterSeconds: retry(Number(w.left_ms)) };
  }
  if (l && req.budget) {
    const room = req.budget.maxUsd - Number(l.spent_usd) - Number(l.reserved_usd);
    // The same comparison as admission's per-call statement, in numeric there: a hair of float error is not a refusal.
    if (req.budget.needUsd > room + 1e-9)
      return { granted: false, refusal: 'budget', retryAfterSeconds: retry(l.left_ms) };
  }
  return undefined;
}
