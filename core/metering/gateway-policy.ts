import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../db/knex.js';
import { MeteringRepository } from '../repositories/metering.repository.js';
import { CounterBatcher } from './counter-batcher.js';
import {
  BudgetExceededError,
  CallOverRateLimitError,
  RateLimitedError,
  UnpricedModelError,
} from './errors.js';
import { LeaseBook, LeaseRefused, type Lease, type LeaseSettings } from './leases.js';
import { costUsd, defaultOutputCeiling, defaultPrice } from './pricing.js';
import {
  reservedOutputTokens,
  reservedUsd as worstCaseUsd,
  storableTokens,
  storableUsd,
} from './reservation.js';
import type {
  Admission,
  AdmitRequest,
  Charge,
  KeylessCall,
  MeteredKey,
  ModelLimits,
  Settlement,
} from './types.js';
import type { UsageCompletion, UsageRow, UsageWriter } from './usage-writer.js';

/** What a usage row says of the call before its outcome: who called whom, when. */
type UsageRowIdentity = Pick<
  UsageRow,
  'virtual_key_id' | 'provider_id' | 'provider_name' | 'model' | 'created_at' | 'lease_id'
>;

/** The outcome's counts as a usage row can hold them (see storableTokens). */
function storableCharge(o: Charge): Charge {
  return {
    ...o,
    inputTokens: storableTokens(o.inputTokens),
    outputTokens: storableTokens(o.outputTokens),
    cacheReadTokens: storableTokens(o.cacheReadTokens),
    cacheWriteTokens: storableTokens(o.cacheWriteTokens),
  };
}

function usageIdentity(call: Admission | KeylessCall): UsageRowIdentity {
  const { key, request } = call;
  const lease = key ? call.lease : undefined;
  return {
    virtual_key_id: key?.id ?? null,
    provider_id: request.providerId,
    provider_name: request.providerName,
    model: request.model,
    // The time of the call, not of the (possibly batched) insert.
    created_at: new Date(),
    lease_id: lease?.budget ? lease.id : null,
  };
}

const PRICE_TTL_MS = 30_000;

export interface GatewayPolicyOptions {
  /** Writes usage rows in batches; without one they are inserted one by one (tests of the policy alone). */
  usageWriter?: UsageWriter;
  /** How long a settle's `logged` waits for an unreachable database before giving up on holding the answer. */
  usageWaitMs?: number;
  /**
   * Admit calls of limited keys against this replica's leases (the gateway);
   * without, each call counts and reserves in its own statement (agent
   * sessions, whose calls are few and long).
   */
  leases?: LeaseSettings;
}

/**
 * Rate limits, budgets and usage for model calls, all in Postgres so every
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
  private readonly repo: MeteringRepository;
  private readonly counters: CounterBatcher;
  /** Admission against this replica's leases of each key's limits (core/metering/leases.ts), when enabled. */
  private readonly leases: LeaseBook | undefined;
  private readonly usageWriter: UsageWriter | undefined;
  private readonly usageWaitMs: number;

  constructor(db: Db, options: GatewayPolicyOptions = {}) {
    this.repo = new MeteringRepository(db);
    this.usageWriter = options.usageWriter;
    this.usageWaitMs = options.usageWaitMs ?? 2_000;
    const leases = options.leases;
    this.counters = new CounterBatcher(this.repo, leases?.ttlMs ?? 0);
    this.leases =
      leases && new LeaseBook(db, leases, (keyId, change) => this.counters.addLeaseWrite(keyId, change));
  }

  /**
   * The model's price and output ceiling: a Model resource's, else the
   * shipped list's (kept for PRICE_TTL_MS). Every call is priced with it,
   * keyed or not, so a call costs the same wherever it is read.
   */
  async limits(providerId: string, model: string): Promise<ModelLimits> {
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

  /** A call no key meters, priced like the others: settle logs its usage under no key. */
  async keyless(request: AdmitRequest): Promise<KeylessCall> {
    const { price } = await this.limits(request.providerId, request.model);
    return { key: undefined, request, price, startedAt: performance.now() };
  }

  async admit(key: MeteredKey, request: AdmitRequest): Promise<Admission> {
    const { price, maxOutputTokens: ceiling } = await this.limits(request.providerId, request.model);
    if (key.budget && !price) throw new UnpricedModelError(request.model);
    const outputTokens = reservedOutputTokens(request, ceiling, key.budget !== null);
    const reservedUsd = worstCaseUsd(price, request.inputTokens, outputTokens);
    // Settles of this key that this replica is still writing when the count starts
    // (their promise may resolve before the refusal reaches us).
    const writing = this.counters.unwritten(key.id);
    const tokens = request.inputTokens + outputTokens;
    let counted: { windowStart?: Date; periodStart?: Date; lease?: Lease };
    try {
      counted = await this.count(key, reservedUsd, tokens);
    } catch (err) {
      // Settles are applied after the answer is sent: a refusal caused by our
      // own unwritten reservations or tokens is re-checked once they are in.
      const pending = this.counters.unwritten(key.id) ?? writing;
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
   * promise resolves once this call's counters are written. A keyless call
   * has no counters: its usage row is all there is to write.
   */
  settle(call: Admission | KeylessCall, reported: Charge): Settlement {
    const { price } = call;
    const outcome = storableCharge(reported);
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
      latency_ms: Math.round(performance.now() - call.startedAt),
      status: outcome.status,
      trace_id: outcome.traceId ?? null,
    };
    const logged = this.logUsage(call, completion);
    const counted = call.key ? this.settleCounters(call, outcome, actual) : undefined;
    return {
      costUsd: actual,
      logged,
      settled: Promise.all([logged, counted]).then(() => ({ costUsd: actual })),
    };
  }

  /** Replaces the admission's reservations in the key's counters (its lease, or its window and budget rows). */
  private settleCounters(admission: Admission, outcome: Charge, actual: number): Promise<void> | undefined {
    const tokens = outcome.inputTokens + outcome.outputTokens;
    if (admission.lease)
      return this.leases!.settle(
        admission.lease,
        admission.reservedUsd,
        actual,
        admission.reservedTokens,
        tokens,
      );
    if (admission.windowStart || admission.periodStart)
      return this.counters.addSettle(admission, tokens, actual);
    return undefined;
  }

  /** Completes the call's provisional row, or writes its final row now (no writer, or no provisional row). */
  private logUsage(call: Admission | KeylessCall, completion: Omit<UsageCompletion, 'id'>): Promise<void> {
    const provisional = call.key ? call.provisional : undefined;
    if (provisional) {
      provisional.complete(completion);
      return provisional.stored(this.usageWaitMs);
    }
    const row = { ...usageIdentity(call), ...completion };
    if (!this.usageWriter) return this.repo.insertUsage(row);
    return this.usageWriter.addFinal(row).stored(this.usageWaitMs);
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
    await this.counters.drain();
    await this.usageWriter?.flush();
  }
}
