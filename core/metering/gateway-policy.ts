import { setTimeout as sleep } from 'node:timers/promises';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import type { Db } from '../db/knex.js';
import { MeteringRepository, type BudgetPeriod } from '../repositories/metering.repository.js';
import { costUsd, defaultOutputCeiling, defaultPrice, type Price } from './pricing.js';
import {
  reservedOutputTokens,
  reservedUsd as worstCaseUsd,
  storableTokens,
  storableUsd,
} from './reservation.js';
import { LeaseBook, LeaseRefused, type Lease, type LeaseSettings, type LeaseWrite } from './leases.js';
import type { ProvisionalUsage, UsageCompletion, UsageRow, UsageWriter } from './usage-writer.js';

export interface RateLimit {
  requests_per_minute?: number;
  tokens_per_minute?: number;
}
export interface Budget {
  max_usd: number;
  period: BudgetPeriod;
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
  /** Estimated prompt tokens (from the request). */
  inputTokens: number;
  /** The caller's output limit per choice; undefined when it set none (the model's ceiling applies). */
  maxOutputTokens: number | undefined;
  /** Choices the vendor writes and bills (OpenAI's `n`, Gemini's `candidateCount`); 1 when absent. */
  choices?: number | undefined;
}

/** What is known of a model for metering: its price and output ceiling (a Model resource's, else the shipped tables'). */
interface ModelLimits {
  price: Price | undefined;
  maxOutputTokens: number | undefined;
}

export interface Admission {
  key: MeteredKey;
  request: AdmitRequest;
  price: Price | undefined;
  /** The most output tokens the vendor can bill for the call (core/metering/reservation.ts). */
  reservedOutputTokens: number;
  windowStart: Date | undefined;
  periodStart: Date | undefined;
  reservedUsd: number;
  /** Tokens the call holds in the key's minute window while in flight (estimated input + reserved output). */
  reservedTokens: number;
  /** The replica's lease the call was admitted on (leases enabled), instead of windowStart/periodStart. */
  lease?: Lease;
  startedAt: number;
  /** The call's usage row, stored while it goes upstream (startUsage), completed by settle. */
  provisional?: ProvisionalUsage;
}

/** What a settle promises: the usage row written (`logged`), and everything, counters included (`settled`). */
export interface Settlement {
  logged: Promise<void>;
  settled: Promise<{ costUsd: number }>;
}

export interface Outcome {
  /** Every prompt token, cache reads and writes included (see core/llm/types.ts Usage). */
  inputTokens: number;
  outputTokens: number;
  /** Of inputTokens, read from and written to the provider's prompt cache (charged at the cache rates). */
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  status: number;
  traceId?: string;
}

const formatCount = (n: number) => n.toLocaleString('en-US');

/**
 * Thrown when a key's requests or tokens per minute are used up (429 with
 * Retry-After): the window's requests, or the tokens its calls reserved (in
 * flight) and used (settled), leave no room for this call.
 */
export class RateLimitedError extends Error {
  override name = 'RateLimitedError';
  /** False when waiting cannot help (CallOverRateLimitError): no Retry-After. */
  readonly retryable: boolean = true;
  constructor(
    readonly retryAfterSeconds: number,
    readonly limit: 'requests_per_minute' | 'tokens_per_minute',
    /** The key's limit, named in the message when known. */
    readonly limitValue?: number,
    message?: string,
  ) {
    super(
      message ??
        `rate limit reached: ${limit}${limitValue === undefined ? '' : ` of ${formatCount(limitValue)}`}` +
          (limit === 'tokens_per_minute' ? ' (calls in flight count the tokens they reserved)' : '') +
          `; retry after ${retryAfterSeconds}s`,
    );
  }
}

/**
 * Thrown when one call reserves more tokens than the key's whole
 * tokens_per_minute: it could never be admitted, so it is refused at once
 * (429, without Retry-After).
 */
export class CallOverRateLimitError extends RateLimitedError {
  override name = 'CallOverRateLimitError';
  override readonly retryable: boolean = false;
  constructor(
    readonly reservedTokens: number,
    tokensPerMinute: number,
  ) {
    super(
      60,
      'tokens_per_minute',
      tokensPerMinute,
      `rate limit: this call reserves ${formatCount(reservedTokens)} tokens (input estimate + max_tokens × n), ` +
        `more than the key's tokens_per_minute of ${formatCount(tokensPerMinute)}, so it can never be admitted; ` +
        'lower max_tokens',
    );
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

/** What a usage row says of the call before its outcome: who called whom, when. */
type UsageRowIdentity = Pick<
  UsageRow,
  'virtual_key_id' | 'provider_id' | 'provider_name' | 'model' | 'created_at' | 'lease_id'
>;

/** The outcome's counts as a usage row can hold them (see storableTokens). */
function storableOutcome(o: Outcome): Outcome {
  return {
    ...o,
    inputTokens: storableTokens(o.inputTokens),
    outputTokens: storableTokens(o.outputTokens),
    cacheReadTokens: storableTokens(o.cacheReadTokens),
    cacheWriteTokens: storableTokens(o.cacheWriteTokens),
  };
}

function usageIdentity({ key, request, lease }: Admission): UsageRowIdentity {
  return {
    virtual_key_id: key.id,
    provider_id: request.providerId,
    provider_name: request.providerName,
    model: request.model,
    // The time of the call, not of the (possibly batched) insert.
    created_at: new Date(),
    lease_id: lease?.budget ? lease.id : null,
  };
}

const PRICE_TTL_MS = 30_000;
/** How long counter changes are retried while the database is unreachable (see retryLater). */
const COUNTER_RETRY_MS = 120_000;
const COUNTER_RETRY_DELAY_MS = 500;

/** Counter changes of one key's settled calls, written together (GatewayPolicyService.addCounters). */
interface CounterBatch {
  /** Tokens to add (used less reserved: may be negative) and requests to give back, by window start (ISO). */
  windows: Map<string, { tokens: number; requestsBack: number }>;
  /** Reservations to release and costs to add, by budget period start (ISO). */
  periods: Map<string, { releaseUsd: number; spentUsd: number }>;
  /** What budget leases consumed, and whether they end, by lease id. */
  leases: Map<string, { periodStart: Date; consumedUsd: number; release: boolean }>;
  /** When its first change was queued (Date.now()), for how long a failed write is retried. */
  createdAt: number;
  /** Settles when the batch's statement has committed (or failed). */
  written: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Moves `from`'s changes into `into` (whose creation time, the oldest, it keeps). */
function mergeBatch(into: CounterBatch, from: CounterBatch): void {
  into.createdAt = Math.min(into.createdAt, from.createdAt);
  for (const [w, d] of from.windows) addWindow(into, new Date(w), d.tokens, d.requestsBack);
  for (const [p, d] of from.periods) {
    const e = into.periods.get(p) ?? { releaseUsd: 0, spentUsd: 0 };
    e.releaseUsd += d.releaseUsd;
    e.spentUsd += d.spentUsd;
    into.periods.set(p, e);
  }
  for (const [id, d] of from.leases) {
    const e = into.leases.get(id) ?? { periodStart: d.periodStart, consumedUsd: 0, release: false };
    e.consumedUsd += d.consumedUsd;
    e.release ||= d.release;
    into.leases.set(id, e);
  }
}

function addWindow(batch: CounterBatch, start: Date, tokens: number, requestsBack: number): void {
  const w = start.toISOString();
  const d = batch.windows.get(w) ?? { tokens: 0, requestsBack: 0 };
  d.tokens += tokens;
  d.requestsBack += requestsBack;
  batch.windows.set(w, d);
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
  return {
    windows: new Map(),
    periods: new Map(),
    leases: new Map(),
    createdAt: Date.now(),
    written,
    resolve,
    reject,
  };
}

/**
 * Rate limits, budgets and usage for gateway calls, all in Postgres so every
 * replica enforces the same numbers. A call is admitted before it goes
 * upstream: a request and the call's tokens (estimated input + reserved
 * output) are counted in the key's current minute window, and the call's
 * maximum possible cost is reserved against the budget, under row locks (or
 * against a lease counted so), so concurrent calls cannot together pass a
 * limit or overspend. `settle` replaces the reservations by the actual
 * tokens and cost and records usage.
 */
export class GatewayPolicyService {
  /**
   * Prices and output ceilings by provider and model, kept for PRICE_TTL_MS:
   * every call is priced (its usage row and span carry the cost) and reserved
   * without a query per call; a changed Model applies within that time.
   */
  private readonly models = new Map<string, { limits: ModelLimits; expires: number }>();
  /** Counter changes of settled calls not yet being written, by key id (see settle). */
  private readonly counterBatches = new Map<string, CounterBatch>();
  /** The batch each key's writer is writing now. */
  private readonly writingBatch = new Map<string, CounterBatch>();
  /** Each key's writer of counter changes, while it runs (see addCounters). */
  private readonly settling = new Map<string, Promise<void>>();

  private readonly repo: MeteringRepository;
  /** Admission against this replica's leases of each key's limits (core/metering/leases.ts), when enabled. */
  private readonly leases: LeaseBook | undefined;

  /**
   * Without a writer, usage rows are inserted one by one (tests of the policy
   * alone). `usageWaitMs`: how long a settle's `logged` waits for an
   * unreachable database before giving up on holding the answer. With
   * `leases`, calls of limited keys are admitted against leases (the
   * gateway); without, each call counts and reserves in its own statement
   * (agent sessions, whose calls are few and long).
   */
  constructor(
    db: Db,
    private readonly usageWriter?: UsageWriter,
    private readonly usageWaitMs = 2_000,
    leases?: LeaseSettings,
  ) {
    this.repo = new MeteringRepository(db);
    this.leases = leases && new LeaseBook(db, leases, (keyId, change) => this.addLeaseWrite(keyId, change));
  }

  private async limits(providerId: string, model: string): Promise<ModelLimits> {
    const key = `${providerId}/${model}`;
    const hit = this.models.get(key);
    if (hit && hit.expires > Date.now()) return hit.limits;
    // A Model resource naming this provider and model id wins over the shipped tables.
    const own = await this.repo.modelLimits(providerId, model);
    const limits = {
      price: own.pricing ?? defaultPrice(model),
      maxOutputTokens: own.maxOutputTokens ?? defaultOutputCeiling(model),
    };
    if (this.models.size > 10_000) this.models.clear();
    this.models.set(key, { limits, expires: Date.now() + PRICE_TTL_MS });
    return limits;
  }

  async admit(key: MeteredKey, request: AdmitRequest): Promise<Admission> {
    const { price, maxOutputTokens: ceiling } = await this.limits(request.providerId, request.model);
    if (key.budget && !price) throw new UnpricedModelError(request.model);
    const outputTokens = reservedOutputTokens(request, ceiling, key.budget !== null);
    const reservedUsd = worstCaseUsd(price, request.inputTokens, outputTokens);
    // Settles of this key that this replica is still writing when the count starts
    // (their promise may resolve before the refusal reaches us).
    const writing = this.unwritten(key.id);
    const tokens = request.inputTokens + outputTokens;
    let counted: { windowStart?: Date; periodStart?: Date; lease?: Lease };
    try {
      counted = await this.count(key, reservedUsd, tokens);
    } catch (err) {
      // Settles are applied after the answer is sent: a refusal caused by our
      // own unwritten reservations or tokens is re-checked once they are in.
      const pending = this.unwritten(key.id) ?? writing;
      if (!pending || !(err instanceof RateLimitedError || err instanceof BudgetExceededError)) throw err;
      await pending.catch(() => undefined);
      counted = await this.count(key, reservedUsd, tokens);
    }
    return {
      key,
      request,
      price,
      reservedOutputTokens: outputTokens,
      windowStart: counted.windowStart,
      periodStart: counted.periodStart,
      reservedUsd,
      reservedTokens: tokens,
      lease: counted.lease,
      startedAt: performance.now(),
    };
  }

  /**
   * Admits against a lease when leases are on, else counts in the key's rows
   * directly. Either way the call's `tokens` are reserved in the key's
   * minute window until it settles, and `usd` in its budget.
   */
  private async count(
    key: MeteredKey,
    usd: number,
    tokens: number,
  ): Promise<{ windowStart?: Date; periodStart?: Date; lease?: Lease }> {
    const tpm = key.rate_limit?.tokens_per_minute;
    if (tpm !== undefined && tpm !== null && tokens > tpm) throw new CallOverRateLimitError(tokens, tpm);
    if (!this.leases || (!key.rate_limit && !key.budget)) return this.countOnce(key, usd, tokens);
    try {
      return { lease: await this.leases.take(key, usd, tokens) };
    } catch (err) {
      if (!(err instanceof LeaseRefused)) throw err;
      if (err.refusal === 'budget') throw new BudgetExceededError(key.budget!);
      throw new RateLimitedError(err.retryAfterSeconds, err.refusal, key.rate_limit?.[err.refusal]);
    }
  }

  /** Counts the request in the key's minute window, reserving `tokens` there, and reserves `usd` against its budget. */
  private async countOnce(
    key: MeteredKey,
    usd: number,
    tokens: number,
  ): Promise<{ windowStart: Date | undefined; periodStart: Date | undefined }> {
    const { rate_limit: limit, budget } = key;
    if (!limit && !budget) return { windowStart: undefined, periodStart: undefined };
    const rpm = limit?.requests_per_minute ?? null;
    const tpm = limit?.tokens_per_minute ?? null;
    const row = await this.repo.countAndReserve({
      keyId: key.id,
      window: limit ? { rpm, tpm, tokens } : undefined,
      reservation: budget ? { period: budget.period, usd, maxUsd: budget.max_usd } : undefined,
    });
    if (limit && !row.windowStart) await this.refuseRate(key.id, rpm, tpm);
    if (budget && !row.periodStart) throw new BudgetExceededError(budget);
    return { windowStart: row.windowStart ?? undefined, periodStart: row.periodStart ?? undefined };
  }

  /** Throws RateLimitedError naming the limit reached and when the window ends. */
  private async refuseRate(keyId: string, rpm: number | null, tpm: number | null): Promise<never> {
    const s = await this.repo.latestWindow(keyId);
    const requests = rpm !== null && (s?.requests ?? 0) >= rpm;
    throw new RateLimitedError(
      Math.max(1, s?.retry ?? 1),
      requests ? 'requests_per_minute' : 'tokens_per_minute',
      (requests ? rpm : tpm) ?? undefined,
    );
  }

  /**
   * When the usage connection is idle, stores the admitted call's usage row
   * while the call goes upstream: provisional, charged at its worst case
   * (the reservation), completed by `settle`. The answer then waits only
   * for an insert that ran beside the upstream call, and a process killed
   * after answering has a row for every call it answered, never charged
   * less than it cost (UsageWriter.addProvisional).
   *
   * Only when idle: completing a row is an update, which cost PostgreSQL
   * ~120 µs per call at concurrency 64 (a new row version in every index,
   * then vacuum) and 15% of the throughput. Under load the answer waits
   * for a group insert anyway, so `settle` writes the final row instead,
   * before the answer's last bytes, as one of many in a statement. At
   * concurrency 1 the provisional row took 0.18 ms off the added latency
   * (bench/gateway-peers, docs/perf-log.md). Without a writer (agent
   * sessions) the row is written by `settle`.
   */
  startUsage(admission: Admission, traceId: string): void {
    if (!this.usageWriter?.idle()) return;
    admission.provisional = this.usageWriter.addProvisional({
      ...usageIdentity(admission),
      input_tokens: storableTokens(admission.request.inputTokens),
      output_tokens: storableTokens(admission.reservedOutputTokens),
      cost_usd: admission.reservedUsd,
      latency_ms: 0,
      // No HTTP status yet: 0 until the outcome is known.
      status: 0,
      trace_id: traceId,
    });
  }

  /**
   * Replaces the reservations by the actual cost and tokens (in the budget
   * and the minute window), and completes the usage row. `logged` resolves once the usage
   * row is stored (the gateway holds the answer's last bytes for it, so a
   * process killed after answering has stored it) or after `usageWaitMs`
   * with the row still queued (the database is unreachable); the
   * counters of calls settled while a write is in flight are merged into one
   * write per key (hot keys settle without queueing on their rows), and the
   * promise resolves once this call's counters are written.
   */
  settle(admission: Admission, reported: Outcome): Settlement {
    const { price } = admission;
    const outcome = storableOutcome(reported);
    const cacheRead = outcome.cacheReadTokens ?? 0;
    const cacheWrite = outcome.cacheWriteTokens ?? 0;
    const actual = price
      ? storableUsd(
          costUsd(price, {
            input_tokens: outcome.inputTokens,
            output_tokens: outcome.outputTokens,
            cache_read_tokens: cacheRead,
            cache_write_tokens: cacheWrite,
          }),
        )
      : 0;
    const completion = {
      input_tokens: outcome.inputTokens,
      output_tokens: outcome.outputTokens,
      cache_read_tokens: cacheRead,
      cache_write_tokens: cacheWrite,
      cost_usd: actual,
      latency_ms: Math.round(performance.now() - admission.startedAt),
      status: outcome.status,
      trace_id: outcome.traceId ?? null,
    };
    const logged = this.logUsage(admission, completion);
    const tokens = outcome.inputTokens + outcome.outputTokens;
    const counted = admission.lease
      ? this.leases!.settle(admission.lease, admission.reservedUsd, actual, admission.reservedTokens, tokens)
      : admission.windowStart || admission.periodStart
        ? this.addCounters(admission, tokens, actual)
        : undefined;
    return { logged, settled: Promise.all([logged, counted]).then(() => ({ costUsd: actual })) };
  }

  /** Completes the call's provisional row, or writes its final row now (no writer, or no provisional row). */
  private logUsage(admission: Admission, completion: Omit<UsageCompletion, 'id'>): Promise<void> {
    const { provisional } = admission;
    if (provisional) {
      provisional.complete(completion);
      return provisional.stored(this.usageWaitMs);
    }
    const row = { ...usageIdentity(admission), ...completion };
    if (!this.usageWriter) return this.repo.insertUsage(row);
    return this.usageWriter.addFinal(row).stored(this.usageWaitMs);
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
    const batch = this.openBatch(admission.key.id);
    // The window holds the call's reservation: the tokens used replace it (the difference may be negative).
    if (admission.windowStart) addWindow(batch, admission.windowStart, tokens - admission.reservedTokens, 0);
    if (admission.periodStart) {
      const p = admission.periodStart.toISOString();
      const d = batch.periods.get(p) ?? { releaseUsd: 0, spentUsd: 0 };
      d.releaseUsd += admission.reservedUsd;
      d.spentUsd += spentUsd;
      batch.periods.set(p, d);
    }
    return this.writeBatch(admission.key.id, batch);
  }

  /** A lease's consumption or end, merged into the key's open batch like a settle's counters. */
  private addLeaseWrite(keyId: string, change: LeaseWrite): Promise<void> {
    const batch = this.openBatch(keyId);
    if (change.window)
      addWindow(batch, change.window.start, change.window.tokens, change.window.requestsBack);
    if (change.lease) {
      const { id, periodStart, consumedUsd, release } = change.lease;
      const d = batch.leases.get(id) ?? { periodStart, consumedUsd: 0, release: false };
      d.consumedUsd += consumedUsd;
      d.release ||= release;
      batch.leases.set(id, d);
    }
    return this.writeBatch(keyId, batch);
  }

  private openBatch(keyId: string): CounterBatch {
    let batch = this.counterBatches.get(keyId);
    if (!batch) {
      batch = newCounterBatch();
      this.counterBatches.set(keyId, batch);
    }
    return batch;
  }

  private writeBatch(keyId: string, batch: CounterBatch): Promise<void> {
    // The writer serves several calls, so it belongs to no one trace.
    if (!this.settling.has(keyId)) context.with(ROOT_CONTEXT, () => this.startWriter(keyId));
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
        await this.writeCounters(keyId, batch).then(batch.resolve, (err: unknown) =>
          this.retryLater(keyId, batch, err),
        );
      }
      // Synchronously with the last look at the queue: a settle after this starts a new writer.
      this.writingBatch.delete(keyId);
      this.settling.delete(keyId);
    })();
    this.settling.set(keyId, writer);
  }

  /**
   * A batch that failed because the database is unreachable is merged into
   * the key's next one and written with it, for up to COUNTER_RETRY_MS: a
   * lease's consumption must not be lost, or the lease, once expired, would
   * be returned as if unspent. Any other failure fails the batch's settles.
   */
  private async retryLater(keyId: string, batch: CounterBatch, err: unknown): Promise<void> {
    if (!isDatabaseUnavailable(err) || Date.now() - batch.createdAt > COUNTER_RETRY_MS) {
      batch.reject(err);
      return;
    }
    const next = this.openBatch(keyId);
    mergeBatch(next, batch);
    next.written.then(batch.resolve, batch.reject);
    await sleep(COUNTER_RETRY_DELAY_MS);
  }

  /** Writes one key's batch of counter changes. */
  private async writeCounters(keyId: string, batch: CounterBatch): Promise<void> {
    await this.repo.addCounters(keyId, {
      windows: [...batch.windows].map(([windowStart, d]) => [new Date(windowStart), d]),
      periods: [...batch.periods].map(([periodStart, d]) => [new Date(periodStart), d]),
      leases: [...batch.leases].map(([id, d]) => ({ id, ...d })),
      leaseTtlMs: this.leases?.settings.ttlMs ?? 0,
    });
  }

  /** Shutting down: every lease is given back (the server has answered its calls) and everything written. */
  async close(waitMs = 10_000): Promise<void> {
    this.leases?.closeAll();
    // Bounded: with the database gone, retries would hold the shutdown (the leases expire instead).
    const timer = sleep(waitMs, undefined, { ref: false });
    await Promise.race([this.drain(), timer]);
  }

  /** Waits until every settle this instance has started is written (counters and usage rows). */
  async drain(): Promise<void> {
    await Promise.all([...this.settling.values()]);
    await this.usageWriter?.flush();
  }

  async usage(keyId: string, start: Date, end: Date) {
    await this.usageWriter?.flush();
    const { totals, models } = await this.repo.usage(keyId, start, end);
    return { start_time: start.toISOString(), end_time: end.toISOString(), totals, models };
  }
}
