import { setTimeout as sleep } from 'node:timers/promises';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import type { MeteringRepository } from '../repositories/metering.repository.js';
import type { LeaseWrite } from './leases.js';
import type { Admission } from './types.js';

/** How long counter changes are retried while the database is unreachable (see retryLater). */
const COUNTER_RETRY_MS = 120_000;
const COUNTER_RETRY_DELAY_MS = 500;

/** Counter changes of one key's settled calls, written together (CounterBatcher). */
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
 * The per-key counters of settled calls (minute windows, budget periods,
 * leases), written off the answer's path: the changes of calls settled
 * while a write is in flight are merged into one write per key, so hot keys
 * settle without queueing on their rows.
 */
export class CounterBatcher {
  /** Counter changes of settled calls not yet being written, by key id. */
  private readonly counterBatches = new Map<string, CounterBatch>();
  /** The batch each key's writer is writing now. */
  private readonly writingBatch = new Map<string, CounterBatch>();
  /** Each key's writer of counter changes, while it runs (see addSettle). */
  private readonly settling = new Map<string, Promise<void>>();

  constructor(
    private readonly repo: MeteringRepository,
    /** How long a lease lives unrenewed, written with each lease change (0 without leases). */
    private readonly leaseTtlMs: number,
  ) {}

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
  addSettle(admission: Admission, tokens: number, spentUsd: number): Promise<void> {
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
  addLeaseWrite(keyId: string, change: LeaseWrite): Promise<void> {
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
  unwritten(keyId: string): Promise<void> | undefined {
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
      leaseTtlMs: this.leaseTtlMs,
    });
  }

  /** Waits until every counter change queued so far is written. */
  async drain(): Promise<void> {
    await Promise.all([...this.settling.values()]);
  }
}
