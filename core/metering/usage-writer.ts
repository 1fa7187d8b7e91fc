import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import type pg from 'pg';
import type { Db } from '../db/knex.js';
import type { Logger } from '../logger.js';
import { MeteringRepository, type DbGatewayUsage } from '../repositories/metering.repository.js';

export type UsageRow = DbGatewayUsage;

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
 * Writes gateway usage rows in batches, off the request path: one insert
 * every `flushMs` (or every `maxBatch` rows) instead of one insert per call.
 * Rows wait as their JSON and go to Postgres as one jsonb parameter (as span
 * rows do, core/telemetry/postgres-exporter.ts): queued objects outlive
 * young-generation GC, and an 11-column multi-row insert costs far more to
 * build and bind than one string. Budgets do not depend on it (their ledger is updated synchronously).
 * `addDurable` is the gateway's way in: its caller waits until the row is
 * written, and such rows are flushed at once, in groups (see there).
 * When the queue is full the caller waits for a direct insert rather than
 * losing a row; on shutdown `close()` writes what is left.
 *
 * A batch that fails because of a row's data is split in halves until the
 * row at fault stands alone; that row is dropped (counted in `droppedRows`
 * and logged at error level with its key id and contents) and every other
 * row is written. Any other failure (the database unreachable) puts the
 * unwritten rows back for the next flush, which is scheduled.
 */
/** A queued row: its JSON, and who waits for it to be written (addDurable). */
interface Queued {
  json: string;
  written?: () => void;
}

export interface UsageWriterOptions {
  flushMs: number;
  maxBatch: number;
  maxQueue: number;
}
const DEFAULT_OPTIONS: UsageWriterOptions = { flushMs: 200, maxBatch: 500, maxQueue: 20_000 };

export class UsageWriter {
  private queue: Queued[] = [];
  /** Rows whose caller waits: flushed at once (group commit) rather than on the timer. */
  private waiting = 0;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private flushing: Promise<void> | undefined;
  /** Rows that could not be stored: rejected for their data, or no room left to keep them for a retry. */
  droppedRows = 0;
  private readonly repo: MeteringRepository;

  /** `pool`: a connection of its own for the inserts (see MeteringRepository); ended by `close()`. */
  constructor(
    db: Db,
    private readonly logger: Logger,
    private readonly opts: UsageWriterOptions = DEFAULT_OPTIONS,
    private readonly pool?: pg.Pool,
  ) {
    this.repo = new MeteringRepository(db, pool);
  }

  async add(row: UsageRow): Promise<void> {
    if (this.queue.length >= this.opts.maxQueue) {
      const json = JSON.stringify(row);
      try {
        await this.insert([json]);
      } catch (err) {
        if (!isPermanent(err)) throw err;
        this.drop(json, err);
      }
      return;
    }
    this.queue.push({ json: JSON.stringify(row) });
    if (this.queue.length >= this.opts.maxBatch) void context.with(ROOT_CONTEXT, () => this.flush());
    else this.schedule();
  }

  /**
   * Queues the row and resolves once it is in Postgres (or dropped for its
   * data, logged), or after `maxWaitMs` with the row still queued for the
   * next attempt (the database is unreachable). The gateway awaits this
   * before the answer's last bytes, so a process killed after answering
   * has already stored the call's row. Rows arriving while an insert is in
   * flight share the next one (group commit): one insert per round trip,
   * however many calls end meanwhile.
   */
  addDurable(row: UsageRow, maxWaitMs: number): Promise<void> {
    if (this.queue.length >= this.opts.maxQueue) return this.add(row);
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, maxWaitMs);
      timer.unref();
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.waiting++;
      this.queue.push({
        json: JSON.stringify(row),
        written: () => {
          this.waiting--;
          done();
        },
      });
      if (!this.flushing && !this.immediate)
        this.immediate = context.with(ROOT_CONTEXT, () =>
          setImmediate(() => {
            this.immediate = undefined;
            void this.flush();
          }),
        );
    });
  }

  private schedule(): void {
    if (this.timer) return;
    // Outside the request that happened to start the timer: a batch belongs to no one trace.
    this.timer = context.with(ROOT_CONTEXT, () => setTimeout(() => void this.flush(), this.opts.flushMs));
    this.timer.unref();
  }

  private async insert(rows: string[]): Promise<void> {
    await this.repo.insertUsageJson(rows);
  }

  private drop(json: string, err: unknown): void {
    this.droppedRows++;
    const row = JSON.parse(json) as UsageRow;
    this.logger.error(
      { err, virtual_key_id: row.virtual_key_id, usage: row, dropped_rows: this.droppedRows },
      'gateway usage row dropped: the database rejects it',
    );
  }

  /** Writes everything queued so far (the usage endpoint calls it first: a replica reads its own writes). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.flushing) await this.flushing;
    if (this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.queue.length);
    this.flushing = this.writeBatch(batch).finally(() => {
      this.flushing = undefined;
      // Callers waiting on rows queued during that insert: the next one starts now.
      if (this.waiting > 0 && this.queue.length > 0) void context.with(ROOT_CONTEXT, () => this.flush());
    });
    await this.flushing;
  }

  private async writeBatch(batch: Queued[]): Promise<void> {
    // Groups still to write, in order; a group rejected for its data is split in two.
    const pending: Queued[][] = [];
    for (let i = 0; i < batch.length; i += this.opts.maxBatch)
      pending.push(batch.slice(i, i + this.opts.maxBatch));
    try {
      while (pending.length > 0) {
        const rows = pending[0]!;
        try {
          await this.insert(rows.map((r) => r.json));
          pending.shift();
          notify(rows);
        } catch (err) {
          if (!isPermanent(err)) throw err;
          pending.shift();
          if (rows.length === 1) {
            this.drop(rows[0]!.json, err);
            notify(rows);
          } else {
            const half = Math.ceil(rows.length / 2);
            pending.unshift(rows.slice(0, half), rows.slice(half));
          }
        }
      }
    } catch (err) {
      // Put back what was not written (oldest first, as far as the queue has room); the next flush tries again.
      const left = pending.flat();
      const kept = left.slice(0, Math.max(0, this.opts.maxQueue - this.queue.length));
      this.queue.unshift(...kept);
      const lost = left.slice(kept.length);
      this.droppedRows += lost.length;
      notify(lost);
      this.logger.error(
        { err, rows: kept.length, dropped_rows: lost.length },
        lost.length > 0
          ? 'writing gateway usage failed; the queue is full, rows dropped'
          : 'writing gateway usage failed; will retry',
      );
      this.schedule();
    }
  }

  /** Writes what is left; rows that still cannot be written are counted as dropped and logged. */
  async close(): Promise<void> {
    await this.flush();
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queue.length > 0) {
      const left = this.queue.splice(0, this.queue.length);
      notify(left);
      const lost = left.length;
      this.droppedRows += lost;
      this.logger.error({ rows: lost }, 'gateway usage not written at shutdown: rows dropped');
    }
    await this.pool?.end();
  }
}

/** Tells the callers waiting on these rows that they are settled (written, or dropped and logged). */
function notify(rows: Queued[]): void {
  for (const r of rows) r.written?.();
}
