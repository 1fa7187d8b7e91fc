import type { BudgetPeriod } from '../budgets/types.js';
import type pg from 'pg';
import type { Db } from '../db/knex.js';
import { GatewayUsageTableName, ModelsTableName, type DbGatewayUsageInsert } from '../db/tables/index.js';
import type { Price } from '../metering/pricing.js';

/** What completes a provisional row: the call's outcome, by the row's id. */
export interface UsageCompletion {
  id: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
  latency_ms: number;
  status: number;
  trace_id: string | null;
}

export type { BudgetPeriod };

/** What one admission counts against a key, in one statement. */
export interface CountRequest {
  keyId: string;
  /**
   * Count the request in the key's minute window and reserve its `tokens`
   * (estimated input + output allowance) there, if these limits allow it
   * (null: no such limit). Settle replaces the reservation by the tokens used.
   */
  window: { rpm: number | null; tpm: number | null; tokens: number } | undefined;
  /** Reserve `usd` in the key's budget period, if it fits under `maxUsd`. */
  reservation: { period: BudgetPeriod; usd: number; maxUsd: number } | undefined;
}

/**
 * Counter changes of one key's settled calls and leases, written together:
 * tokens (what calls used less what they reserved at admission, so possibly
 * negative; a window never goes below zero) and requests given back, by
 * window start; per-call reservations
 * released and costs spent by budget period start; and what this replica's
 * budget leases consumed, with `release` for a lease that ends (its
 * unconsumed rest goes back to the ledger and its row is deleted).
 */
export interface CounterChanges {
  windows: Array<[windowStart: Date, change: { tokens: number; requestsBack: number }]>;
  periods: Array<[periodStart: Date, change: { releaseUsd: number; spentUsd: number }]>;
  leases: Array<{ id: string; periodStart: Date; consumedUsd: number; release: boolean }>;
  /** How long from now a lease kept here stays valid (a replica holding it renews it). */
  leaseTtlMs: number;
}

const USAGE_COLUMNS =
  'virtual_key_id, provider_id, provider_name, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, latency_ms, status, trace_id, created_at, provisional, lease_id';
/** The same from a JSON row; a row without cache counts (no caching) has zeros. */
const USAGE_VALUES =
  'virtual_key_id, provider_id, provider_name, model, input_tokens, output_tokens, coalesce(cache_read_tokens, 0), coalesce(cache_write_tokens, 0), cost_usd, latency_ms, status, trace_id, created_at, coalesce(provisional, false), lease_id';

/**
 * Selected by each counter statement (admit's count and reservation, settle's
 * writes): the statement's own transaction commits without waiting for its
 * WAL flush. Every replica sees the change at once and the row locks work as
 * before, so limits and budgets hold exactly while Postgres runs; what a
 * Postgres crash can lose is the last moments of counter changes (at most
 * 3 × wal_writer_delay, 600 ms by default), as the usage log already accepts
 * for its batches. Waiting for the flush held each hot key's rows locked for
 * the length of an fsync (0.3–1.5 ms here), which serialised a key's calls.
 */
const ASYNC_COMMIT = "set_config('synchronous_commit', 'off', true) as async_commit";

/**
 * Usage rows from one jsonb parameter (`?`), committed as the counters are
 * (ASYNC_COMMIT: see insertUsageJson). Their ids are drawn before the insert
 * and returned in the order of the rows given, so a provisional row can be
 * completed by id.
 */
const INSERT_USAGE_SQL = `with src as materialized (
    select nextval('gateway_usage_id_seq') as new_id, r.ordinality as ord, r.*
      from jsonb_populate_recordset(null::gateway_usage, ?::jsonb) with ordinality r),
  ins as (insert into gateway_usage (id, ${USAGE_COLUMNS}) select new_id, ${USAGE_VALUES} from src)
  select ${ASYNC_COMMIT}, array(select new_id::text from src order by ord) as ids`;

/** Provisional rows completed with their calls' outcomes (UsageCompletion JSON objects). */
const COMPLETE_USAGE_SQL = `with done as (update gateway_usage u
     set input_tokens = c.input_tokens, output_tokens = c.output_tokens,
         cache_read_tokens = c.cache_read_tokens, cache_write_tokens = c.cache_write_tokens,
         cost_usd = c.cost_usd, latency_ms = c.latency_ms, status = c.status, trace_id = c.trace_id,
         provisional = false
    from jsonb_populate_recordset(null::gateway_usage, ?::jsonb) c
   where u.id = c.id returning 1)
  select ${ASYNC_COMMIT}, (select count(*) from done) as rows`;

/** The same for node-postgres itself (`$1`). */
const INSERT_USAGE_PG = INSERT_USAGE_SQL.replace('?::jsonb', '$1::jsonb');

/** When the current budget period began, in SQL. */
export const PERIOD_SQL: Record<BudgetPeriod, string> = {
  day: "date_trunc('day', now())",
  week: "date_trunc('week', now())",
  month: "date_trunc('month', now())",
  total: "'1970-01-01T00:00:00Z'::timestamptz",
};

/**
 * The gateway's counters (minute windows, budget ledger), its usage log and
 * the model prices it meters with. Knex only: the rules are in
 * core/metering/gateway-policy.ts.
 */
export class MeteringRepository {
  /**
   * `usagePool`: a connection of its own for usage inserts (UsageWriter):
   * they are the gateway's one statement per answered call at concurrency 1,
   * and knex's query building and pool checkout cost as much CPU again as
   * the query itself (~70 µs here).
   */
  constructor(
    private readonly db: Db,
    private readonly usagePool?: pg.Pool,
  ) {}

  /**
   * What the Model resources naming this provider and model id say of it:
   * the newest one's `pricing` and the newest one's `max_output_tokens`
   * (each from the newest resource that sets it).
   */
  async modelLimits(
    providerId: string,
    model: string,
  ): Promise<{ pricing?: Price; maxOutputTokens?: number }> {
    const rows: Array<{ pricing: Price | null; max_output_tokens: number | null }> = await this.db(
      ModelsTableName,
    )
      .where({ provider_id: providerId, model_id: model })
      .where((q) => q.whereNotNull('pricing').orWhereNotNull('max_output_tokens'))
      .orderBy('updated_at', 'desc')
      .select('pricing', 'max_output_tokens');
    return {
      pricing: rows.find((r) => r.pricing)?.pricing ?? undefined,
      maxOutputTokens: rows.find((r) => r.max_output_tokens !== null)?.max_output_tokens ?? undefined,
    };
  }

  /**
   * Counts the request in the key's minute window and reserves against its
   * budget, in one statement (one round trip) when the key has both. The
   * statement takes the window row and then the ledger row (the reservation
   * depends on the count); settles take one row at a time, so nothing waits
   * in a cycle. A start is null when its limit refused the call.
   *
   * A window's `tokens` are what its calls reserved while in flight and
   * used once settled (addCounters adds the difference), so calls admitted
   * together cannot pass tokens_per_minute: one is admitted only if its
   * reservation fits beside all the others'.
   */
  async countAndReserve(req: CountRequest): Promise<{ windowStart: Date | null; periodStart: Date | null }> {
    const { window, reservation } = req;
    // The reservation runs only once the count succeeded (`exists … w`), so
    // the statement takes the window row, then the ledger row.
    const ctes: string[] = [];
    const args: Array<string | number | null> = [];
    if (window) {
      ctes.push(`w as (
        insert into gateway_rate_windows as w (virtual_key_id, window_start, requests, tokens)
          select ?, date_trunc('minute', now()), 1, ?::bigint
          where ?::bigint is null or ?::bigint <= ?::bigint
        on conflict (virtual_key_id, window_start) do update
          set requests = w.requests + 1, tokens = w.tokens + excluded.tokens
          where (?::int is null or w.requests < ?::int)
            and (?::bigint is null or w.tokens + excluded.tokens <= ?::bigint)
        returning window_start)`);
      args.push(req.keyId, window.tokens, window.tpm, window.tokens, window.tpm);
      args.push(window.rpm, window.rpm, window.tpm, window.tpm);
    }
    if (reservation) {
      ctes.push(`l as (
        insert into gateway_budget_ledger as l (virtual_key_id, period_start, reserved_usd)
          select ?, ${PERIOD_SQL[reservation.period]}, ?::numeric
          where ?::numeric <= ?::numeric ${window ? 'and exists (select 1 from w)' : ''}
        on conflict (virtual_key_id, period_start) do update set reserved_usd = l.reserved_usd + excluded.reserved_usd
          where l.spent_usd + l.reserved_usd + excluded.reserved_usd <= ?::numeric
        returning period_start)`);
      args.push(req.keyId, reservation.usd, reservation.usd, reservation.maxUsd, reservation.maxUsd);
    }
    const { rows } = await this.db.raw<{
      rows: Array<{ window_start: Date | null; period_start: Date | null }>;
    }>(
      `with ${ctes.join(', ')}
       select ${ASYNC_COMMIT},
         ${window ? '(select window_start from w)' : 'null::timestamptz'} as window_start,
         ${reservation ? '(select period_start from l)' : 'null::timestamptz'} as period_start`,
      args,
    );
    return { windowStart: rows[0]?.window_start ?? null, periodStart: rows[0]?.period_start ?? null };
  }

  /** The key's newest minute window: its requests and the seconds until it ends. */
  async latestWindow(keyId: string): Promise<{ requests: number; retry: number } | undefined> {
    const { rows } = await this.db.raw<{ rows: Array<{ requests: number; retry: number }> }>(
      `select requests, ceil(extract(epoch from (window_start + interval '1 minute' - now())))::int as retry
         from gateway_rate_windows where virtual_key_id = ? order by window_start desc limit 1`,
      [keyId],
    );
    return rows[0];
  }

  /**
   * Writes one key's batch of counter changes, in one statement. It takes
   * the window rows (oldest first), then lease rows, then ledger rows, as
   * admission and lease acquisition do, so nothing waits in a cycle: the
   * later updates wait on `n`, the count of window updates. A lease whose row
   * is gone (expired and swept by another replica, which returned all it
   * held) still adds its cost to `spent_usd` but releases nothing.
   */
  async addCounters(keyId: string, changes: CounterChanges): Promise<void> {
    const ctes: string[] = [];
    const args: Array<string | number | Date> = [];
    const windows = [...changes.windows].sort(([a], [b]) => a.getTime() - b.getTime());
    windows.forEach(([windowStart, d], i) => {
      ctes.push(`w${i} as (update gateway_rate_windows
        set tokens = greatest(tokens + ?, 0), requests = greatest(requests - ?, 0)
        where virtual_key_id = ? and window_start = ? returning 1)`);
      args.push(d.tokens, d.requestsBack, keyId, windowStart);
    });
    const counts = windows.map((_, i) => `(select count(*) from w${i})`);
    ctes.push(`n as (select ${counts.length ? counts.join(' + ') : '0'} as n)`);
    ctes.push(`lo as (select * from jsonb_to_recordset(?::jsonb)
        as x(id uuid, period_start timestamptz, consumed numeric, release boolean))`);
    args.push(
      JSON.stringify(
        changes.leases.map((l) => ({
          id: l.id,
          period_start: l.periodStart,
          consumed: l.consumedUsd,
          release: l.release,
        })),
      ),
    );
    ctes.push(`lu as (update gateway_budget_leases b
        set consumed_usd = b.consumed_usd + lo.consumed, expires_at = now() + ?::int * interval '1 millisecond'
        from lo where b.id = lo.id and b.virtual_key_id = ? and not lo.release and (select n from n) >= 0
        returning lo.period_start, lo.consumed as back)`);
    args.push(changes.leaseTtlMs, keyId);
    ctes.push(`ld as (delete from gateway_budget_leases b using lo
        where b.id = lo.id and b.virtual_key_id = ? and lo.release and (select n from n) >= 0
        returning lo.period_start, b.granted_usd - b.consumed_usd as back)`);
    args.push(keyId);
    ctes.push(
      `pc as (select * from jsonb_to_recordset(?::jsonb) as p(period_start timestamptz, spent numeric, back numeric))`,
    );
    args.push(
      JSON.stringify(
        changes.periods.map(([periodStart, d]) => ({
          period_start: periodStart,
          spent: d.spentUsd,
          back: d.releaseUsd,
        })),
      ),
    );
    ctes.push(`ls as (select period_start, sum(spent) as spent, sum(back) as back from (
          select period_start, spent, back from pc
          union all select period_start, consumed, 0 from lo
          union all select period_start, 0, back from lu
          union all select period_start, 0, back from ld) t group by period_start)`);
    ctes.push(`lx as (update gateway_budget_ledger g
        set reserved_usd = greatest(g.reserved_usd - ls.back, 0), spent_usd = g.spent_usd + ls.spent
        from ls where g.virtual_key_id = ? and g.period_start = ls.period_start and (select n from n) >= 0
        returning 1)`);
    args.push(keyId);
    await this.db.raw(
      `with ${ctes.join(',\n')}
       select ${ASYNC_COMMIT}, (select n from n) as windows, (select count(*) from lx) as ledgers`,
      args,
    );
  }

  async insertUsage(row: DbGatewayUsageInsert): Promise<void> {
    await this.db(GatewayUsageTableName).insert(row);
  }

  /**
   * Inserts usage rows given as JSON objects, as one jsonb parameter (see
   * UsageWriter), committed like the counters (ASYNC_COMMIT): the gateway
   * holds an answer's last bytes until its row is stored, and waiting for
   * the WAL flush as well doubled that wait at concurrency 1 (an fsync per
   * call). Every replica sees the row at once and a killed replica has
   * stored it; a PostgreSQL crash (not a restart) can lose the last moments
   * of rows, as of counters. Returns the rows' ids, in the order given.
   */
  async insertUsageJson(rows: string[]): Promise<string[]> {
    const json = `[${rows.join(',')}]`;
    // Named: prepared once per connection, so PostgreSQL skips parsing and planning it (0.23 → 0.15 ms here).
    const { rows: out } = this.usagePool
      ? await this.usagePool.query<{ ids: string[] }>({
          name: 'insert_usage_rows',
          text: INSERT_USAGE_PG,
          values: [json],
        })
      : await this.db.raw<{ rows: Array<{ ids: string[] }> }>(INSERT_USAGE_SQL, [json]);
    return out[0]!.ids;
  }

  /**
   * Completes provisional rows (UsageCompletion objects as JSON), committed
   * like the inserts; on the main pool, so the usage connection stays free
   * for inserts that answers wait for.
   */
  async completeUsageJson(rows: string[]): Promise<void> {
    await this.db.raw(COMPLETE_USAGE_SQL, [`[${rows.join(',')}]`]);
  }

  /**
   * The key's current budget period as the budget counts it (the ledger the
   * gateway admits against): when it began and ends (null for `total`), what
   * was spent and what calls in flight hold reserved. Zeros before the
   * period's first call.
   */
  async budgetPeriod(
    keyId: string,
    period: BudgetPeriod,
  ): Promise<{ period_start: Date; period_end: Date | null; spent_usd: number; reserved_usd: number }> {
    const start = PERIOD_SQL[period];
    const end = period === 'total' ? 'null::timestamptz' : `${start} + interval '1 ${period}'`;
    // A lease past its expiry (its replica died) holds nothing: the next lease taken returns it.
    const { rows } = await this.db.raw<{
      rows: Array<{ period_start: Date; period_end: Date | null; spent_usd: number; reserved_usd: number }>;
    }>(
      `select ${start} as period_start, ${end} as period_end,
              coalesce(l.spent_usd, 0)::float8 as spent_usd,
              greatest(coalesce(l.reserved_usd, 0) - coalesce((select sum(b.granted_usd - b.consumed_usd)
                from gateway_budget_leases b where b.virtual_key_id = ? and b.period_start = ${start}
                 and b.expires_at < now()), 0), 0)::float8 as reserved_usd
         from (select 1) one
         left join gateway_budget_ledger l on l.virtual_key_id = ? and l.period_start = ${start}`,
      [keyId, keyId],
    );
    return rows[0]!;
  }

  /** The key's calls from `start` (inclusive) to `end`: totals, and the same sums by provider and model. */
  async usage(keyId: string, start: Date, end: Date) {
    const base = () =>
      this.db('gateway_usage')
        .where({ virtual_key_id: keyId })
        .andWhere('created_at', '>=', start)
        .andWhere('created_at', '<', end);
    const sums = {
      requests: this.db.raw('count(*)::int'),
      errors: this.db.raw('count(*) filter (where status >= 400)::int'),
      input_tokens: this.db.raw('coalesce(sum(input_tokens), 0)::bigint'),
      output_tokens: this.db.raw('coalesce(sum(output_tokens), 0)::bigint'),
      cache_read_tokens: this.db.raw('coalesce(sum(cache_read_tokens), 0)::bigint'),
      cache_write_tokens: this.db.raw('coalesce(sum(cache_write_tokens), 0)::bigint'),
      cost_usd: this.db.raw('coalesce(sum(cost_usd), 0)::float8'),
      avg_latency_ms: this.db.raw('coalesce(avg(latency_ms), 0)::float8'),
    };
    const [totals]: Array<Record<string, number>> = await base().select(sums);
    const models = (await base()
      .select({ provider: 'provider_name', model: 'model', ...sums })
      .groupBy('provider_name', 'model')
      .orderBy('requests', 'desc')) as unknown as Array<Record<string, number | string>>;
    return { totals: totals!, models };
  }
}
