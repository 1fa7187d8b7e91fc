import { context, ROOT_CONTEXT } from '@opentelemetry/api';
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

/** Counter changes of one key's settled calls, written together (GatewayPolicyService.addCounters). */
interface CounterBatch {
  /** Tokens to add, by window start (ISO). */
  windows: Map<string, number>;
  /** Reservations to release and costs to add, by budget period start (ISO). */
  periods: Map<string, { releaseUsd: number; spentUsd: number }>;
  /** Settles when the batch's statement has committed (or failed). */
  written: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function newCounterBatch(): CounterBatch {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const written = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A batch whose settles were all dropped must not be an unhandled rejection.
  written.catch(() => undefined);
  return { windows: new Map(), periods: new Map(), written, resolve, reject };
}

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
  /** Counter changes of settled calls not yet being written, by key id (see settle). */
  private readonly counterBatches = new Map<string, CounterBatch>();
  /** The batch each key's writer is writing now. */
  private readonly writingBatch = new Map<string, CounterBatch>();
  /** Each key's writer of counter changes, while it runs (see addCounters). */
  private readonly settling = new Map<string, Promise<void>>();

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
    // Settles of this key that this replica is still writing when the count starts
    // (their promise may resolve before the refusal reaches us).
    const writing = this.unwritten(key.id);
    let counted: { windowStart: Date | undefined; periodStart: Date | undefined };
    try {
      counted = await this.count(key, reservedUsd);
    } catch (err) {
      // Settles are applied after the answer is sent: a refusal caused by our
      // own unwritten reservations or tokens is re-checked once they are in.
      const pending = this.unwritten(key.id) ?? writing;
      if (!pending || !(err instanceof RateLimitedError || err instanceof BudgetExceededError)) throw err;
      await pending.catch(() => undefined);
      counted = await this.count(key, reservedUsd);
    }
    return { key, request, price, ...counted, reservedUsd, startedAt: performance.now() };
  }

  /**
   * Counts the request in the key's minute window and reserves `usd` against
   * its budget, in one statement (one round trip) when the key has both. The
   * statement takes the window row and then the ledger row (the reservation
   * depends on the count); settles take one row at a time, so nothing waits
   * in a cycle.
   */
  private async count(
    key: MeteredKey,
    usd: number,
  ): Promise<{ windowStart: Date | undefined; periodStart: Date | undefined }> {
    const { rate_limit: limit, budget } = key;
    if (!limit && !budget) return { windowStart: undefined, periodStart: undefined };
    const rpm = limit?.requests_per_minute ?? null;
    const tpm = limit?.tokens_per_minute ?? null;
    // The reservation runs only once the count succeeded (`exists … w`), so
    // the statement takes the window row, then the ledger row.
    const ctes: string[] = [];
    const args: Array<string | number | null> = [];
    if (limit) {
      ctes.push(`w as (
        insert into gateway_rate_windows as w (virtual_key_id, window_start, requests)
          values (?, date_trunc('minute', now()), 1)
        on conflict (virtual_key_id, window_start) do update set requests = w.requests + 1
          where (?::int is null or w.requests < ?::int) and (?::bigint is null or w.tokens < ?::bigint)
        returning window_start)`);
      args.push(key.id, rpm, rpm, tpm, tpm);
    }
    if (budget) {
      ctes.push(`l as (
        insert into gateway_budget_ledger as l (virtual_key_id, period_start, reserved_usd)
          select ?, ${PERIOD_SQL[budget.period]}, ?::numeric
          where ?::numeric <= ?::numeric ${limit ? 'and exists (select 1 from w)' : ''}
        on conflict (virtual_key_id, period_start) do update set reserved_usd = l.reserved_usd + excluded.reserved_usd
          where l.spent_usd + l.reserved_usd + excluded.reserved_usd <= ?::numeric
        returning period_start)`);
      args.push(key.id, usd, usd, budget.max_usd, budget.max_usd);
    }
    const { rows } = await this.db.raw<{
      rows: Array<{ window_start: Date | null; period_start: Date | null }>;
    }>(
      `with ${ctes.join(', ')}
       select ${ASYNC_COMMIT},
         ${limit ? '(select window_start from w)' : 'null::timestamptz'} as window_start,
         ${budget ? '(select period_start from l)' : 'null::timestamptz'} as period_start`,
      args,
    );
    const row = rows[0];
    if (limit && !row?.window_start) await this.refuseRate(key.id, rpm);
    if (budget && !row?.period_start) throw new BudgetExceededError(budget);
    return { windowStart: row?.window_start ?? undefined, periodStart: row?.period_start ?? undefined };
  }

  /** Throws RateLimitedError naming the limit reached and when the window ends. */
  private async refuseRate(keyId: string, rpm: number | null): Promise<never> {
    const { rows: state } = await this.db.raw<{ rows: Array<{ requests: number; retry: number }> }>(
      `select requests, ceil(extract(epoch from (window_start + interval '1 minute' - now())))::int as retry
         from gateway_rate_windows where virtual_key_id = ? order by window_start desc limit 1`,
      [keyId],
    );
    const s = state[0];
    const which = rpm !== null && (s?.requests ?? 0) >= rpm ? 'requests_per_minute' : 'tokens_per_minute';
    throw new RateLimitedError(Math.max(1, s?.retry ?? 1), which);
  }

  /**
   * Replaces the reservation by the actual cost, adds tokens to the minute
   * window, and records the usage row. The usage row is queued before this
   * returns its promise (the usage endpoint flushes the writer first); the
   * counters of calls settled while a write is in flight are merged into one
   * write per key (hot keys settle without queueing on their rows), and the
   * promise resolves once this call's counters are written.
   */
  settle(admission: Admission, outcome: Outcome): Promise<{ costUsd: number }> {
    const { key, request, price } = admission;
    const actual = price ? costUsd(price, outcome.inputTokens, outcome.outputTokens) : 0;
    const row = {
      virtual_key_id: key.id,
      provider_id: request.providerId,
      provider_name: request.providerName,
      model: request.model,
      input_tokens: outcome.inputTokens,
      output_tokens: outcome.outputTokens,
      cost_usd: actual,
      latency_ms: Math.round(performance.now() - admission.startedAt),
      status: outcome.status,
      trace_id: outcome.traceId ?? null,
      // The time of the call, not of the (possibly batched) insert.
      created_at: new Date(),
    };
    const logged = this.usageWriter ? this.usageWriter.add(row) : this.db('gateway_usage').insert(row);
    const counted =
      admission.windowStart || admission.periodStart
        ? this.addCounters(admission, outcome.inputTokens + outcome.outputTokens, actual)
        : undefined;
    return Promise.all([logged, counted]).then(() => ({ costUsd: actual }));
  }

  /**
   * Queues this call's counter changes in the key's open batch and returns
   * the promise of that batch's write. One writer per key at a time: it takes
   * the open batch (a new one opens for the settles that follow), writes it in
   * one statement, and repeats while a batch is open. So a hot key makes one
   * write per write's duration, however many calls settle meanwhile, and a
   * pending settle holds only its share of a batch. (A chain of one write per
   * settle, each merging whatever had accumulated, still made one statement
   * per call under sustained load, and its backlog grew to seconds.)
   */
  private addCounters(admission: Admission, tokens: number, spentUsd: number): Promise<void> {
    const id = admission.key.id;
    let batch = this.counterBatches.get(id);
    if (!batch) {
      batch = newCounterBatch();
      this.counterBatches.set(id, batch);
    }
    if (admission.windowStart) {
      const w = admission.windowStart.toISOString();
      batch.windows.set(w, (batch.windows.get(w) ?? 0) + tokens);
    }
    if (admission.periodStart) {
      const p = admission.periodStart.toISOString();
      const d = batch.periods.get(p) ?? { releaseUsd: 0, spentUsd: 0 };
      d.releaseUsd += admission.reservedUsd;
      d.spentUsd += spentUsd;
      batch.periods.set(p, d);
    }
    // The writer serves several calls, so it belongs to no one trace.
    if (!this.settling.has(id)) context.with(ROOT_CONTEXT, () => this.startWriter(id));
    return batch.written;
  }

  /** Resolves once every counter change of this key settled so far is written; undefined when none is pending. */
  private unwritten(keyId: string): Promise<void> | undefined {
    // Batches are written in order: the open one is last.
    return (this.counterBatches.get(keyId) ?? this.writingBatch.get(keyId))?.written;
  }

  private startWriter(keyId: string): void {
    const writer = (async () => {
      // Registered below before this runs on.
      await Promise.resolve();
      for (;;) {
        const batch = this.counterBatches.get(keyId);
        if (!batch) break;
        this.counterBatches.delete(keyId);
        this.writingBatch.set(keyId, batch);
        // A failed write fails its own batch's settles; the next batch is still written.
        await this.writeCounters(keyId, batch).then(batch.resolve, batch.reject);
      }
      // Synchronously with the last look at the queue: a settle after this starts a new writer.
      this.writingBatch.delete(keyId);
      this.settling.delete(keyId);
    })();
    this.settling.set(keyId, writer);
  }

  /** Writes one key's batch of counter changes. */
  private async writeCounters(keyId: string, batch: CounterBatch): Promise<void> {
    // One statement. It takes the window rows (oldest first) before the
    // ledger rows, as admit does: the ledger updates wait on `n`, the count of
    // window updates, so they run after them.
    const ctes: string[] = [];
    const args: Array<string | number | Date> = [];
    const windows = [...batch.windows].sort(([a], [b]) => a.localeCompare(b));
    windows.forEach(([windowStart, tokens], i) => {
      ctes.push(`w${i} as (update gateway_rate_windows set tokens = tokens + ?
        where virtual_key_id = ? and window_start = ? returning 1)`);
      args.push(tokens, keyId, new Date(windowStart));
    });
    const counts = windows.map((_, i) => `(select count(*) from w${i})`);
    ctes.push(`n as (select ${counts.length ? counts.join(' + ') : '0'} as n)`);
    [...batch.periods].forEach(([periodStart, d], i) => {
      ctes.push(`l${i} as (update gateway_budget_ledger
        set reserved_usd = greatest(reserved_usd - ?, 0), spent_usd = spent_usd + ?
        where virtual_key_id = ? and period_start = ? and (select n from n) >= 0 returning 1)`);
      args.push(d.releaseUsd, d.spentUsd, keyId, new Date(periodStart));
    });
    const ledgers = [...batch.periods.keys()].map((_, i) => `(select count(*) from l${i})`);
    await this.db.raw(
      `with ${ctes.join(',\n')}
       select ${ASYNC_COMMIT}, (select n from n) as windows, ${ledgers.length ? ledgers.join(' + ') : '0'} as ledgers`,
      args,
    );
  }

  /** Waits until every settle this instance has started is written (counters and usage rows). */
  async drain(): Promise<void> {
    await Promise.all([...this.settling.values()]);
    await this.usageWriter?.flush();
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
