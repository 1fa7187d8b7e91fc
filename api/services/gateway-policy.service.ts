import type { Db } from '../db/knex.js';
import { costUsd, priceFor, type Price } from './pricing.js';
import type { UsageWriter } from './usage-writer.js';

export interface RateLimit {
  requests_per_minute?: number;
  tokens_per_minute?: number;
}
export interface Budget {
  max_usd: number;
  period: 'day' | 'week' | 'month' | 'total';
}

/** What the policy needs of a virtual key. */
export interface MeteredKey {
  id: string;
  rate_limit: RateLimit | null;
  budget: Budget | null;
}

export interface AdmitRequest {
  providerId: string;
  providerName: string;
  model: string;
  /** Estimated prompt tokens (from the request) and the most the call may generate. */
  inputTokens: number;
  maxOutputTokens: number;
}

export interface Admission {
  key: MeteredKey;
  request: AdmitRequest;
  price: Price | undefined;
  windowStart: Date | undefined;
  periodStart: Date | undefined;
  reservedUsd: number;
  startedAt: number;
}

export interface Outcome {
  inputTokens: number;
  outputTokens: number;
  status: number;
  traceId?: string;
}

/** Thrown when a key's requests or tokens per minute are used up (429 with Retry-After). */
export class RateLimitedError extends Error {
  override name = 'RateLimitedError';
  constructor(
    readonly retryAfterSeconds: number,
    readonly limit: 'requests_per_minute' | 'tokens_per_minute',
  ) {
    super(`rate limit reached: ${limit}; retry after ${retryAfterSeconds}s`);
  }
}

/** Thrown when the call's maximum possible cost does not fit in what is left of the key's budget (429, insufficient_quota). */
export class BudgetExceededError extends Error {
  override name = 'BudgetExceededError';
  constructor(readonly budget: Budget) {
    super(`budget of ${budget.max_usd} USD per ${budget.period} is exhausted for this key`);
  }
}

/** Thrown when a key has a budget but no price is known for the model, so its cost cannot be bounded (400). */
export class UnpricedModelError extends Error {
  override name = 'UnpricedModelError';
  constructor(readonly model: string) {
    super(
      `no price is known for model "${model}" and this key has a budget: set pricing on a Model resource for it`,
    );
  }
}

const PRICE_TTL_MS = 30_000;

const PERIOD_SQL: Record<Budget['period'], string> = {
  day: "date_trunc('day', now())",
  week: "date_trunc('week', now())",
  month: "date_trunc('month', now())",
  total: "'1970-01-01T00:00:00Z'::timestamptz",
};

/**
 * Rate limits, budgets and usage for gateway calls, all in Postgres so every
 * replica enforces the same numbers. A call is admitted before it goes
 * upstream: a request is counted in the key's current minute window, and the
 * call's maximum possible cost is reserved against the budget under a row
 * lock, so concurrent calls cannot together overspend. `settle` replaces the
 * reservation by the actual cost and records usage.
 */
export class GatewayPolicyService {
  /**
   * Prices by provider and model, kept for PRICE_TTL_MS: every call is priced
   * (its usage row and span carry the cost) without a query per call; a
   * changed Model pricing applies within that time.
   */
  private readonly prices = new Map<string, { price: Price | undefined; expires: number }>();

  /** Without a writer, usage rows are inserted one by one (tests of the policy alone). */
  constructor(
    private readonly db: Db,
    private readonly usageWriter?: UsageWriter,
  ) {}

  private async price(providerId: string, model: string): Promise<Price | undefined> {
    const key = `${providerId}/${model}`;
    const hit = this.prices.get(key);
    if (hit && hit.expires > Date.now()) return hit.price;
    const price = await priceFor(this.db, providerId, model);
    if (this.prices.size > 10_000) this.prices.clear();
    this.prices.set(key, { price, expires: Date.now() + PRICE_TTL_MS });
    return price;
  }

  async admit(key: MeteredKey, request: AdmitRequest): Promise<Admission> {
    const price = await this.price(request.providerId, request.model);
    if (key.budget && !price) throw new UnpricedModelError(request.model);
    const reservedUsd = price ? costUsd(price, request.inputTokens, request.maxOutputTokens) : 0;
    // Each step is one atomic upsert and no transaction spans them: a request
    // holds at most one row lock at a time, so hot keys queue briefly but never deadlock.
    const windowStart = key.rate_limit ? await this.countRequest(key.id, key.rate_limit) : undefined;
    const periodStart = key.budget ? await this.reserve(key.id, key.budget, reservedUsd) : undefined;
    return { key, request, price, windowStart, periodStart, reservedUsd, startedAt: performance.now() };
  }

  /** Counts the request in the key's current minute unless a limit is already reached. */
  private async countRequest(keyId: string, limit: RateLimit): Promise<Date> {
    const rpm = limit.requests_per_minute ?? null;
    const tpm = limit.tokens_per_minute ?? null;
    const { rows } = await this.db.raw<{ rows: Array<{ window_start: Date }> }>(
      `insert into gateway_rate_windows as w (virtual_key_id, window_start, requests)
         values (?, date_trunc('minute', now()), 1)
       on conflict (virtual_key_id, window_start) do update set requests = w.requests + 1
         where (?::int is null or w.requests < ?::int) and (?::bigint is null or w.tokens < ?::bigint)
       returning window_start`,
      [keyId, rpm, rpm, tpm, tpm],
    );
    if (rows[0]) return rows[0].window_start;
    const { rows: state } = await this.db.raw<{ rows: Array<{ requests: number; retry: number }> }>(
      `select requests, ceil(extract(epoch from (window_start + interval '1 minute' - now())))::int as retry
         from gateway_rate_windows where virtual_key_id = ? order by window_start desc limit 1`,
      [keyId],
    );
    const s = state[0];
    const which = rpm !== null && (s?.requests ?? 0) >= rpm ? 'requests_per_minute' : 'tokens_per_minute';
    throw new RateLimitedError(Math.max(1, s?.retry ?? 1), which);
  }

  /** Reserves `usd` against the budget of the current period, or refuses when it would not fit. */
  private async reserve(keyId: string, budget: Budget, usd: number): Promise<Date> {
    const period = PERIOD_SQL[budget.period];
    const { rows } = await this.db.raw<{ rows: Array<{ period_start: Date }> }>(
      `insert into gateway_budget_ledger as l (virtual_key_id, period_start, reserved_usd)
         select ?, ${period}, ?::numeric where ?::numeric <= ?::numeric
       on conflict (virtual_key_id, period_start) do update set reserved_usd = l.reserved_usd + excluded.reserved_usd
         where l.spent_usd + l.reserved_usd + excluded.reserved_usd <= ?::numeric
       returning period_start`,
      [keyId, usd, usd, budget.max_usd, budget.max_usd],
    );
    if (!rows[0]) throw new BudgetExceededError(budget);
    return rows[0].period_start;
  }

  /** Replaces the reservation by the actual cost, adds tokens to the minute window, and records the usage row. */
  async settle(admission: Admission, outcome: Outcome): Promise<{ costUsd: number }> {
    const { key, request, price } = admission;
    const actual = price ? costUsd(price, outcome.inputTokens, outcome.outputTokens) : 0;
    const latencyMs = Math.round(performance.now() - admission.startedAt);
    // Each counter is its own statement (no transaction): settle never holds
    // two row locks, so it cannot deadlock with admit, which takes the window
    // row and then the ledger row inside one transaction.
    const db = this.db;
    if (admission.windowStart) {
      await db('gateway_rate_windows')
        .where({ virtual_key_id: key.id, window_start: admission.windowStart })
        .increment('tokens', outcome.inputTokens + outcome.outputTokens);
    }
    if (admission.periodStart) {
      await db('gateway_budget_ledger')
        .where({ virtual_key_id: key.id, period_start: admission.periodStart })
        .update({
          reserved_usd: db.raw('greatest(reserved_usd - ?, 0)', [admission.reservedUsd]),
          spent_usd: db.raw('spent_usd + ?', [actual]),
        });
    }
    const row = {
      virtual_key_id: key.id,
      provider_id: request.providerId,
      provider_name: request.providerName,
      model: request.model,
      input_tokens: outcome.inputTokens,
      output_tokens: outcome.outputTokens,
      cost_usd: actual,
      latency_ms: latencyMs,
      status: outcome.status,
      trace_id: outcome.traceId ?? null,
      // The time of the call, not of the (possibly batched) insert.
      created_at: new Date(),
    };
    if (this.usageWriter) await this.usageWriter.add(row);
    else await db('gateway_usage').insert(row);
    return { costUsd: actual };
  }

  async usage(keyId: string, start: Date, end: Date) {
    await this.usageWriter?.flush();
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
      cost_usd: this.db.raw('coalesce(sum(cost_usd), 0)::float8'),
      avg_latency_ms: this.db.raw('coalesce(avg(latency_ms), 0)::float8'),
    };
    const [totals]: Array<Record<string, number>> = await base().select(sums);
    const models = (await base()
      .select({ provider: 'provider_name', model: 'model', ...sums })
      .groupBy('provider_name', 'model')
      .orderBy('requests', 'desc')) as unknown as Array<Record<string, number | string>>;
    return { start_time: start.toISOString(), end_time: end.toISOString(), totals: totals!, models };
  }
}
