import type { DbGatewayUsageInsert } from '../db/tables/gateway-usage.js';
import type { UsageCompletion } from '../repositories/metering.repository.js';

/** Where a row's completion goes once its id is known (the UsageWriter's next flush). */
export interface CompletionQueue {
  queueCompletion(completion: UsageCompletion): void;
}

type UsageRow = DbGatewayUsageInsert;

/**
 * A row stored while its call goes upstream (UsageWriter.addProvisional),
 * completed with the call's outcome after the answer has left.
 */
export interface ProvisionalUsage {
  /**
   * Resolves once the row is in Postgres (or dropped for its data, logged),
   * or after `maxWaitMs` with it still queued (the database is unreachable).
   * The gateway holds the answer's last bytes for it.
   */
  stored(maxWaitMs: number): Promise<void>;
  /** The call's outcome: written with the next flush, off the answer's path. */
  complete(outcome: Omit<UsageCompletion, 'id'>): void;
}

/** A queued insert: its JSON, and the handle of a caller who waits for it (addProvisional, addFinal). */
export interface Queued {
  json: string;
  /** Taken into an insert that has not finished (a completion can no longer replace its JSON). */
  inFlight?: boolean;
  handle?: RowHandle;
}

/** A waited-for row's state, from its insert to its completion (a provisional row's). */
export class RowHandle implements ProvisionalUsage {
  /** Set once inserted; undefined while queued or in flight, and for a dropped row. */
  private id: string | undefined;
  private done = false;
  private readonly waiters: Array<() => void> = [];
  /** An outcome that arrived while the insert was in flight: completed once the id is known. */
  private pending: Omit<UsageCompletion, 'id'> | undefined;

  constructor(
    private readonly writer: CompletionQueue,
    readonly entry: Queued,
    private readonly row: UsageRow,
  ) {}

  stored(maxWaitMs: number): Promise<void> {
    if (this.done) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, maxWaitMs);
      timer.unref();
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  complete(outcome: Omit<UsageCompletion, 'id'>): void {
    if (this.id !== undefined) this.writer.queueCompletion({ id: this.id, ...outcome });
    else if (!this.entry.inFlight && !this.done) this.entry.json = finalJson(this.row, outcome);
    else if (!this.done) this.pending = outcome;
  }

  /** The insert settled: written with `id`, or dropped. */
  settle(id: string | undefined): void {
    this.done = true;
    this.id = id;
    if (id !== undefined && this.pending) this.writer.queueCompletion({ id, ...this.pending });
    this.pending = undefined;
    for (const w of this.waiters.splice(0)) w();
  }

  /** The insert failed and the row is queued again: an outcome that came meanwhile goes in with it. */
  requeued(): void {
    if (!this.pending) return;
    this.entry.json = finalJson(this.row, this.pending);
    this.pending = undefined;
  }
}

/** A provisional row turned into the final one, when its outcome came before its insert. */
export function finalJson(row: UsageRow, outcome: Omit<UsageCompletion, 'id'>): string {
  return JSON.stringify({ ...row, ...outcome, provisional: false });
}
