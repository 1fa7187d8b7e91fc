import type { Db } from '../db/knex.js';
import type { Logger } from '../logger.js';

export interface UsageRow {
  virtual_key_id: string;
  provider_id: string | null;
  provider_name: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  latency_ms: number;
  status: number;
  trace_id: string | null;
  created_at: Date;
}

/**
 * Writes gateway usage rows in batches, off the request path: one multi-row
 * insert every `flushMs` (or every `maxBatch` rows) instead of one insert per
 * call. Budgets do not depend on it (their ledger is updated synchronously).
 * When the queue is full the caller waits for a direct insert rather than
 * losing a row; on shutdown `close()` writes what is left.
 */
export class UsageWriter {
  private queue: UsageRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly opts = { flushMs: 200, maxBatch: 500, maxQueue: 20_000 },
  ) {}

  async add(row: UsageRow): Promise<void> {
    if (this.queue.length >= this.opts.maxQueue) {
      await this.db('gateway_usage').insert(row);
      return;
    }
    this.queue.push(row);
    if (this.queue.length >= this.opts.maxBatch) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.opts.flushMs);
      this.timer.unref();
    }
  }

  /** Writes everything queued so far (the usage endpoint calls it first: a replica reads its own writes). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.flushing) await this.flushing;
    if (this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.queue.length);
    this.flushing = (async () => {
      try {
        for (let i = 0; i < batch.length; i += this.opts.maxBatch) {
          await this.db('gateway_usage').insert(batch.slice(i, i + this.opts.maxBatch));
        }
      } catch (err) {
        // Put them back once; the next flush tries again.
        this.logger.error({ err, rows: batch.length }, 'writing gateway usage failed; will retry');
        this.queue.unshift(...batch.slice(0, Math.max(0, this.opts.maxQueue - this.queue.length)));
      } finally {
        this.flushing = undefined;
      }
    })();
    await this.flushing;
  }

  async close(): Promise<void> {
    await this.flush();
  }
}
