import { randomUUID } from 'node:crypto';
import type { Db } from '../db/knex.js';
import { LeaseRepository, type GiveBack } from '../repositories/lease.repository.js';
import type { BudgetPeriod } from '../repositories/metering.repository.js';

export interface LeaseSettings {
  /** How long a replica spends one lease before it takes the next (and gives back what is left). */
  spendMs: number;
  /** A lease not renewed for this long is returned by the next replica that takes one of the key. */
  ttlMs: number;
}

/** The limits a lease is taken against (a virtual key's). */
export interface LeasedKey {
  id: string;
  rate_limit: { requests_per_minute?: number; tokens_per_minute?: number } | null;
  budget: { max_usd: number; period: BudgetPeriod } | null;
}

/** A lease's change to the key's counters, queued in its next counter write. */
export interface LeaseWrite {
  lease?: { id: string; periodStart: Date; consumedUsd: number; release: boolean };
  window?: { start: Date; tokens: number; requestsBack: number };
}

/** Thrown when a lease cannot be had: the limit named is used up (see GatewayPolicyService). */
export class LeaseRefused extends Error {
  override name = 'LeaseRefused';
  constructor(
    readonly refusal: 'requests_per_minute' | 'tokens_per_minute' | 'budget',
    readonly retryAfterSeconds: number,
  ) {
    super(`lease refused: ${refusal}`);
  }
}

const FIRST_SIZE = 16;
const MAX_SIZE = 4_096;

/**
 * One slice of a key's limits this replica holds: requests and a token
 * allowance of one minute window, and USD of one budget period, all already
 * counted in PostgreSQL. Calls are admitted against it without a round trip.
 * A call reserves its worst case of each (its estimated input and output
 * allowance in tokens, its worst-case cost in USD) while it is in flight;
 * when it ends, what it actually used replaces the reservation.
 */
export class Lease {
  readonly startedAt = performance.now();
  renewedAt = this.startedAt;
  inFlight = 0;
  admitted = 0;
  /** No more calls; given back once the last in flight settles. */
  closed = false;
  /** Its unused part is being given back with the next lease's transaction: not released meanwhile. */
  givingBack = false;
  released = false;
  /** Of the budget slice: not reserved by a call. */
  availableUsd: number;
  requestsLeft: number;
  /**
   * Tokens counted in the window for this lease. A call is admitted while the
   * reservations of the calls in flight, the tokens the settled ones used and
   * its own reservation fit in it.
   */
  tokenAllowance: number;
  /** Reserved by the calls in flight (each its estimated input + output allowance). */
  tokensReserved = 0;
  /** Used by the settled calls, as the provider reported. */
  tokensUsed = 0;

  constructor(
    readonly keyId: string,
    readonly id: string,
    readonly window: { start: Date; requests: number | null; tokens: number | null } | undefined,
    readonly budget: { periodStart: Date; usd: number } | undefined,
    readonly openUntil: number,
  ) {
    this.availableUsd = budget?.usd ?? Infinity;
    this.requestsLeft = window?.requests ?? Infinity;
    this.tokenAllowance = window?.tokens ?? Infinity;
  }

  admits(usd: number, tokens: number, ttlMs: number): boolean {
    const now = performance.now();
    return (
      !this.closed &&
      now < this.openUntil &&
      // Not renewed for half its TTL (the database is slow or gone): another replica may soon return it.
      now < this.renewedAt + ttlMs / 2 &&
      this.requestsLeft >= 1 &&
      this.tokensReserved + this.tokensUsed + tokens <= this.tokenAllowance &&
      this.availableUsd + 1e-12 >= usd
    );
  }

  take(usd: number, tokens: number): void {
    this.inFlight++;
    this.admitted++;
    this.requestsLeft--;
    this.tokensReserved += tokens;
    if (this.budget) this.availableUsd -= usd;
  }

  /**
   * What to give back when the next lease is taken: the unused requests,
   * tokens and USD. The calls in flight keep their reservations (negative
   * tokens: settled calls used more than they reserved, counted at once).
   */
  leftover(): GiveBack {
    return {
      window: this.window && {
        start: this.window.start,
        requests: this.window.requests === null ? 0 : this.requestsLeft,
        tokens: this.window.tokens === null ? 0 : this.tokenAllowance - this.tokensUsed - this.tokensReserved,
      },
      budget: this.budget && { leaseId: this.id, usd: Math.max(0, this.availableUsd) },
    };
  }

  /** The give-back is in the database: the lease now holds only what its calls in flight reserved. */
  gaveBack(back: GiveBack): void {
    if (back.window) {
      this.requestsLeft -= back.window.requests;
      this.tokenAllowance -= back.window.tokens;
    }
    if (back.budget) this.availableUsd -= back.budget.usd;
  }

  /**
   * The final write, once no call is in flight: consumption, and the unused
   * rest back (the lease row's rest is returned by its delete); the window
   * keeps the tokens its calls used.
   */
  release(consumedUsd: number): LeaseWrite {
    this.released = true;
    return {
      lease: this.budget && { id: this.id, periodStart: this.budget.periodStart, consumedUsd, release: true },
      window: this.window && {
        start: this.window.start,
        tokens: this.tokensUsed - (this.window.tokens === null ? 0 : this.tokenAllowance),
        requestsBack: this.window.requests === null ? 0 : Math.max(0, this.requestsLeft),
      },
    };
  }
}

interface KeyLeases {
  current?: Lease;
  acquiring?: Promise<unknown>;
  /** Calls the next lease is sized for: about what the last one admitted per `spendMs`. */
  size: number;
}

/**
 * The leases of one replica, so metered keys run at full speed. A call
 * of a key with a rate limit or a budget is admitted against the replica's
 * current lease of that key, in memory; a lease is taken, in one
 * transaction, when there is none or it cannot admit the call (spent, or
 * older than `spendMs`), and the previous lease's unused part is given back
 * in the same transaction. What a lease holds is counted in PostgreSQL
 * before it is spent, so however many replicas there are, a budget is never
 * overspent and a rate limit never exceeded; what one replica holds unused
 * is unavailable to the others until it gives it back (briefly under-used).
 * Leases are sized to demand (about `spendMs` worth of calls) and are at
 * most a quarter of what is left, so a nearly used limit is shared in ever
 * smaller slices and its last calls are admitted one by one; a slice is
 * never smaller than what the asking call reserves (its worst-case cost,
 * its tokens), and a call that does not fit in what is left is refused. A
 * token allowance therefore holds every admitted call's whole reservation,
 * in flight or settled, and tokens_per_minute cannot be passed by calls
 * admitted together. A replica
 * renews its budget leases every `ttlMs / 4`; a dead replica's are returned
 * by the next replica to take a lease of the key once `ttlMs` has passed.
 */
export class LeaseBook {
  private readonly keys = new Map<string, KeyLeases>();
  /** Closed leases with calls still in flight: renewed until given back. */
  private readonly closing = new Set<Lease>();
  private readonly repo: LeaseRepository;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    db: Db,
    readonly settings: LeaseSettings,
    /** Queues a write in the key's counter batch (GatewayPolicyService); resolves once it is written. */
    private readonly write: (keyId: string, change: LeaseWrite) => Promise<void>,
  ) {
    this.repo = new LeaseRepository(db);
  }

  /**
   * Admits one call of `usd` (its worst-case cost) and `tokens` (its
   * estimated input + output allowance), both reserved until it settles, or
   * throws LeaseRefused.
   */
  async take(key: LeasedKey, usd: number, tokens: number): Promise<Lease> {
    let state = this.keys.get(key.id);
    if (!state) this.keys.set(key.id, (state = { size: FIRST_SIZE }));
    for (;;) {
      const lease = state.current;
      if (lease?.admits(usd, tokens, this.settings.ttlMs)) {
        lease.take(usd, tokens);
        return lease;
      }
      if (state.acquiring) {
        // Another call is taking the next lease: admit against it, or take one in turn.
        await state.acquiring.catch(() => undefined);
        continue;
      }
      const acquiring = this.acquire(key, state, usd, tokens);
      // What the others wait for: settled either way (a refusal is thrown to this call only).
      state.acquiring = acquiring.then(
        () => (state.acquiring = undefined),
        () => (state.acquiring = undefined),
      );
      await acquiring;
    }
  }

  private async acquire(key: LeasedKey, state: KeyLeases, usd: number, tokens: number): Promise<void> {
    const prev = state.current;
    state.current = undefined;
    if (prev) {
      state.size = nextSize(prev, state.size, this.settings.spendMs);
      prev.closed = true;
      prev.givingBack = true;
    }
    try {
      await this.acquireGivingBack(key, state, usd, tokens, prev);
    } finally {
      if (prev) {
        prev.givingBack = false;
        this.close(prev);
      }
    }
  }

  private async acquireGivingBack(
    key: LeasedKey,
    state: KeyLeases,
    usd: number,
    tokens: number,
    prev: Lease | undefined,
  ): Promise<void> {
    const giveBack = prev?.leftover();
    const limit = key.rate_limit;
    const leaseId = randomUUID();
    const answer = await this.repo.acquire({
      keyId: key.id,
      leaseId,
      ttlMs: this.settings.ttlMs,
      window: limit
        ? {
            rpm: limit.requests_per_minute ?? null,
            tpm: limit.tokens_per_minute ?? null,
            wantRequests: state.size,
            needTokens: tokens,
            wantTokens: state.size * tokens,
          }
        : undefined,
      budget: key.budget
        ? { period: key.budget.period, maxUsd: key.budget.max_usd, needUsd: usd, wantUsd: state.size * usd }
        : undefined,
      giveBack,
    });
    if (prev && giveBack) prev.gaveBack(giveBack);
    if (!answer.granted) throw new LeaseRefused(answer.refusal, answer.retryAfterSeconds);
    const { window, budget } = answer;
    // A lease ends with its window or period: the next one counts in the new one.
    const openMs = Math.min(this.settings.spendMs, window?.leftMs ?? Infinity, budget?.leftMs ?? Infinity);
    state.current = new Lease(key.id, leaseId, window, budget, performance.now() + openMs);
    this.startTimer();
  }

  /**
   * A call admitted on `lease` is over: `costUsd` spent of the `reservedUsd`
   * it held, `tokens` used of the `reservedTokens` it held.
   */
  settle(
    lease: Lease,
    reservedUsd: number,
    costUsd: number,
    reservedTokens: number,
    tokens: number,
  ): Promise<void> {
    lease.inFlight--;
    lease.tokensReserved -= reservedTokens;
    lease.tokensUsed += tokens;
    if (lease.budget) lease.availableUsd += reservedUsd - costUsd;
    if (lease.closed && lease.inFlight === 0 && !lease.givingBack && !lease.released) {
      this.closing.delete(lease);
      return this.write(lease.keyId, lease.release(costUsd));
    }
    if (!lease.budget || costUsd === 0) return Promise.resolve();
    return this.write(lease.keyId, {
      lease: { id: lease.id, periodStart: lease.budget.periodStart, consumedUsd: costUsd, release: false },
    });
  }

  private close(lease: Lease): void {
    lease.closed = true;
    if (lease.released) return;
    if (lease.inFlight > 0) this.closing.add(lease);
    else {
      this.closing.delete(lease);
      // A failed write is retried by nobody: the lease row expires and the next taker returns it.
      void this.write(lease.keyId, lease.release(0)).catch(() => undefined);
    }
  }

  private startTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.settings.ttlMs / 4);
    this.timer.unref();
  }

  /** Closes leases past their time, and renews the budget leases still held. */
  private async tick(): Promise<void> {
    const now = performance.now();
    const held: Lease[] = [...this.closing];
    for (const state of this.keys.values()) {
      const lease = state.current;
      if (!lease) continue;
      if (now >= lease.openUntil) {
        state.current = undefined;
        this.close(lease);
      } else held.push(lease);
    }
    const budgeted = held.filter((l) => l.budget && !l.released);
    // Keys gone quiet are forgotten (their next call starts a lease of the first size).
    for (const [id, state] of this.keys) if (!state.current && !state.acquiring) this.keys.delete(id);
    if (held.length === 0 && this.keys.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    try {
      await this.repo.renew(
        budgeted.map((l) => l.id),
        this.settings.ttlMs,
      );
      for (const l of held) l.renewedAt = now;
    } catch {
      // Not renewed: its calls stop at half the TTL (Lease.admits) and the next tick tries again.
    }
  }

  /** Shutting down: no more calls; every lease is given back once its calls are over (they are, after the server drained). */
  closeAll(): void {
    for (const state of this.keys.values()) {
      if (state.current) this.close(state.current);
      state.current = undefined;
    }
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** About `spendMs` worth of the calls `prev` admitted, growing at most fourfold a step. */
function nextSize(prev: Lease, size: number, spendMs: number): number {
  const lived = Math.max(50, performance.now() - prev.startedAt);
  const wanted = Math.ceil((prev.admitted * spendMs) / lived);
  return Math.max(1, Math.min(MAX_SIZE, size * 4, wanted));
}
