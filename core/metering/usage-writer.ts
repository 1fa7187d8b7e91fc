import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import type pg from 'pg';
import type { Db } from '../db/knex.js';
import type { Logger } from '../logger.js';
import type { DbGatewayUsageInsert } from '../db/tables/gateway-usage.js';
import { MeteringRepository, type UsageCompletion } from '../repositories/metering.repository.js';
import { RowHandle, type ProvisionalUsage, type Queued } from './usage-row.js';

/** A usage row as the writer inserts it. */
export type UsageRow = DbGatewayUsageInsert;
export type { UsageCompletion };
export type { ProvisionalUsage } from './usage-row.js';

/**
 * Postgres error classes caused by a row's own data: 22 data exception, 23
 * integrity constraint violation (e.g. 23503, a key id that does not exist).
 * The same row fails the same way however often it is retried.
 */
const PERMANENT_ERROR_CLASSES = new Set(['22', '23']);

function isPermanent(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length === 5 && PERMANENT_ERROR_CLASSES.has(code.slice(0, 2));
}

/**
 * Writes gateway usage rows, off the answer's path where it can. Rows wait
 * as their JSON and go to Postgres as one jsonb parameter (as span rows do,
 * core/telemetry/postgres-exporter.ts): queued objects outlive
 * young-generation GC, and an 11-column multi-row insert costs far more to
 * build and bind than one string.
 *
 * - `addProvisional` stores a call's row while the call goes upstream,
 *   charged at its worst case (the reservation); the answer's last bytes
 *   wait for that insert only (usually long done), so a process killed after
 *   answering has stored a row for every call it answered, never charged
 *   less than it cost. The outcome completes the row with the next timed
 *   flush (`completeMs`), on the main pool; an outcome that comes before the
 *   insert has left replaces the provisional row (one insert, the final
 *   row). The gateway uses it while the writer is `idle()`.
 * - `addFinal` stores a finished call's row; the answer's last bytes wait
 *   for it (the gateway under load, and whenever no provisional row was
 *   stored).
 * - Rows whose caller waits are inserted as soon as the usage connection is
 *   free, in groups: rows arriving while an insert is in flight share the
 *   next one (group commit).
 * - `add` queues a row for the next timed flush (every `flushMs`, or every
 *   `maxBatch` rows).
 *
 * When the queue is full the caller waits for a direct insert rather than
 * losing a row; on shutdown `close()` writes what is left. A batch that fails
 * because of a row's data is split in halves until the row at fault stands
 * alone; that row is dropped (counted in `droppedRows` and logged at error
 * level with its contents) and every other row is written. Any other failure
 * (the database unreachable) puts the unwritten rows back for the next
 * flush, which is scheduled.
 */
export interface UsageWriterOptions {
  flushMs: number;
  /**
   * How long a completion waits for others to share its statement: what a
   * killed replica's last answered calls may stay charged at their worst
   * case, and how long another replica's usage reads show them so.
   */
  completeMs: number;
  maxBatch: number;
  maxQueue: number;
}
const DEFAULT_OPTIONS: UsageWriterOptions = { flushMs: 200, completeMs: 50, maxBatch: 500, maxQueue: 20_000 };

export class UsageWriter {
  private queue: Queued[] = [];
  /** Completions of provisional rows (UsageCompletion JSON), written with the timed flush. */
  private completions: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** When `timer` fires (Date.now()). */
  private due = 0;
  /**
   * The last insert and the last completion asked for. Inserts run one at a
   * time on the usage connection, in the order asked; completions likewise
   * on the main pool, so a completion never holds up an insert an answer
   * waits for.
   */
  private readonly lanes = {
    insert: Promise.resolve() as Promise<unknown>,
    complete: Promise.resolve() as Promise<unknown>,
  };
  /** Inserts started and not finished (0 or 1). */
  private inserting = 0;
  /** A write of the queue asked for and not yet started: rows queued meanwhile join it (group commit). */
  private insertTurn: Promise<boolean> | undefined;
  private completionTurn: Promise<boolean> | undefined;
  /** Rows that could not be stored: rejected for their data, or no room left to keep them for a retry. */
  droppedRows = 0;
  private readonly repo: MeteringRepository;
  private readonly opts: UsageWriterOptions;

  /** `pool`: a connection of its own for the writes (see MeteringRepository); ended by `close()`. */
  constructor(
    db: Db,
    private readonly logger: Logger,
    options: Partial<UsageWriterOptions> = {},
    private readonly pool?: pg.Pool,
  ) {
    this.opts = { ...DEFAULT_OPTIONS, ...options };
    this.repo = new MeteringRepository(db, pool);
  }

  async add(row: UsageRow): Promise<void> {
    if (this.queue.length >= this.opts.maxQueue) {
      const json = JSON.stringify(row);
      try {
        await this.repo.insertUsageJson([json]);
      } catch (err) {
        if (!isPermanent(err)) throw err;
        this.drop(json, err);
      }
      return;
    }
    this.queue.push({ json: JSON.stringify(row) });
    if (this.queue.length >= this.opts.maxBatch) void this.insertSoon();
    else this.schedule();
  }

  /**
   * Queues `row` (the call's worst case) for an insert as soon as the
   * connection is free, shared with the rows queued until then (group
   * commit), and returns its handle.
   */
  addProvisional(row: UsageRow): ProvisionalUsage {
    return this.enqueue(JSON.stringify({ ...row, provisional: true }), row);
  }

  /** Queues a finished call's row like `addProvisional`; the handle's `stored` says when it is in. */
  addFinal(row: UsageRow): Pick<ProvisionalUsage, 'stored'> {
    return this.enqueue(JSON.stringify(row), row);
  }

  private enqueue(json: string, row: UsageRow): RowHandle {
    const entry: Queued = { json };
    entry.handle = new RowHandle(this, entry, row);
    this.queue.push(entry);
    void this.insertSoon();
    return entry.handle;
  }

  /** Queues a provisional row's completion for the timed flush. */
  queueCompletion(completion: UsageCompletion): void {
    this.completions.push(JSON.stringify(completion));
    if (this.completions.length >= this.opts.maxBatch) void this.completeSoon();
    else this.schedule(this.opts.completeMs);
  }

  /** A flush within `ms` (sooner if one is already due sooner). */
  private schedule(ms = this.opts.flushMs): void {
    const due = Date.now() + ms;
    if (this.timer && this.due <= due) return;
    clearTimeout(this.timer);
    this.due = due;
    // Outside the request that happened to start the timer: a batch belongs to no one trace.
    this.timer = context.with(ROOT_CONTEXT, () => setTimeout(() => void this.flush(), ms));
    this.timer.unref();
  }

  private drop(json: string, err: unknown): void {
    this.droppedRows++;
    const row = JSON.parse(json) as UsageRow;
    this.logger.error(
      { err, virtual_key_id: row.virtual_key_id, usage: row, dropped_rows: this.droppedRows },
      'gateway usage row dropped: the database rejects it',
    );
  }

  /**
   * Writes everything queued so far, completions included (the usage
   * endpoint calls it first: a replica reads its own writes). Writes take
   * turns in the order asked, so a flush under sustained traffic ends after
   * the writes already asked for, not when the traffic stops.
   */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all([this.insertSoon(), this.completeSoon()]);
  }

  /**
   * Nothing queued or being inserted: a row added now is inserted at once,
   * alone. The gateway stores a call's row provisionally only then (see
   * GatewayPolicyService.startUsage).
   */
  idle(): boolean {
    return this.queue.length === 0 && this.inserting === 0;
  }

  /** One write of a lane at a time, in the order asked; outside any request's trace (a batch serves many). */
  private turn(lane: keyof UsageWriter['lanes'], write: () => Promise<boolean>): Promise<boolean> {
    const next = this.lanes[lane].then(() => context.with(ROOT_CONTEXT, write));
    this.lanes[lane] = next.catch(() => undefined);
    return next;
  }

  /** The queue's next insert: the one not yet started, or a new turn. */
  private insertSoon(): Promise<boolean> {
    return (this.insertTurn ??= this.turn('insert', async () => {
      this.insertTurn = undefined;
      const batch = this.queue.splice(0, this.queue.length);
      if (batch.length === 0) return true;
      for (const q of batch) q.inFlight = true;
      this.inserting++;
      try {
        return await this.writeInserts(batch);
      } finally {
        this.inserting--;
      }
    }));
  }

  private completeSoon(): Promise<boolean> {
    return (this.completionTurn ??= this.turn('complete', () => {
      this.completionTurn = undefined;
      const batch = this.completions.splice(0, this.completions.length);
      return batch.length > 0 ? this.writeCompletions(batch) : Promise.resolve(true);
    }));
  }

  /** Inserts `batch`; false when the database failed and what was left is queued again. */
  private async writeInserts(batch: Queued[]): Promise<boolean> {
    const left = await this.writeGroups(
      batch,
      (rows) => rows.json,
      async (rows) => {
        const ids = await this.repo.insertUsageJson(rows.map((r) => r.json));
        rows.forEach((r, i) => r.handle?.settle(ids[i]));
      },
      (rows) => rows.forEach((r) => r.handle?.settle(undefined)),
    );
    if (!left) return true;
    // Put back what was not written (oldest first, as far as the queue has room); the next flush tries again.
    const kept = left.rows.slice(0, Math.max(0, this.opts.maxQueue - this.queue.length));
    for (const q of kept) {
      q.inFlight = false;
      q.handle?.requeued();
    }
    this.queue.unshift(...kept);
    const lost = left.rows.slice(kept.length);
    this.droppedRows += lost.length;
    for (const q of lost) q.handle?.settle(undefined);
    this.logWriteFailure(left.err, 'usage rows', kept.length, lost.length);
    return false;
  }

  private async writeCompletions(batch: string[]): Promise<boolean> {
    const left = await this.writeGroups(
      batch,
      (json) => json,
      (rows) => this.repo.completeUsageJson(rows),
      () => undefined,
    );
    if (!left) return true;
    const kept = left.rows.slice(0, Math.max(0, this.opts.maxQueue - this.completions.length));
    this.completions.unshift(...kept);
    const lost = left.rows.length - kept.length;
    this.droppedRows += lost;
    this.logWriteFailure(left.err, 'usage completions', kept.length, lost);
    return false;
  }

  /**
   * Writes `batch` in groups of `maxBatch`, in order. A group rejected for
   * its data is split in two until the row at fault stands alone, which is
   * dropped (logged). Returns the rows not written when the database fails
   * otherwise (unreachable), with the error.
   */
  private async writeGroups<T>(
    batch: T[],
    jsonOf: (row: T) => string,
    write: (rows: T[]) => Promise<void>,
    dropped: (rows: T[]) => void,
  ): Promise<{ rows: T[]; err: unknown } | undefined> {
    const pending: T[][] = [];
    for (let i = 0; i < batch.length; i += this.opts.maxBatch)
      pending.push(batch.slice(i, i + this.opts.maxBatch));
    while (pending.length > 0) {
      const rows = pending[0]!;
      try {
        await write(rows);
        pending.shift();
      } catch (err) {
        if (!isPermanent(err)) return { rows: pending.flat(), err };
        pending.shift();
        if (rows.length === 1) {
          this.drop(jsonOf(rows[0]!), err);
          dropped(rows);
        } else {
          const half = Math.ceil(rows.length / 2);
          pending.unshift(rows.slice(0, half), rows.slice(half));
        }
      }
    }
    return undefined;
  }

  private logWriteFailure(err: unknown, what: string, kept: number, lost: number): void {
    this.logger.error(
      { err, rows: kept, dropped_rows: lost },
      lost > 0
        ? `writing gateway ${what} failed; the queue is full, rows dropped`
        : `writing gateway ${what} failed; will retry`,
    );
    this.schedule();
  }

  /** Writes what is left; rows that still cannot be written are counted as dropped and logged. */
  async close(): Promise<void> {
    await this.flush();
    clearTimeout(this.timer);
    this.timer = undefined;
    const left = this.queue.splice(0, this.queue.length);
    for (const q of left) q.handle?.settle(undefined);
    const lost = left.length + this.completions.splice(0).length;
    if (lost > 0) {
      this.droppedRows += lost;
      this.logger.error({ rows: lost }, 'gateway usage not written at shutdown: rows dropped');
    }
    await this.pool?.end();
  }
}
