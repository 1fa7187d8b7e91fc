import { context, ROOT_CONTEXT } from '@opentelemetry/api';
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

const COLUMNS =
  'virtual_key_id, provider_id, provider_name, model, input_tokens, output_tokens, cost_usd, latency_ms, status, trace_id, created_at';

/**
 * Writes gateway usage rows in batches, off the request path: one insert
 * every `flushMs` (or every `maxBatch` rows) instead of one insert per call.
 * Rows wait as their JSON and go to Postgres as one jsonb parameter (as span
 * rows do, api/telemetry/postgres-exporter.ts): queued objects outlive
 * young-generation GC, and an 11-column multi-row insert costs far more to
 * build and bind than one string. Budgets do not depend on it (their ledger is updated synchronously).
 * When the queue is full the caller waits for a direct insert rather than
 * losing a row; on shutdown `close()` writes what is left.
 */
export class UsageWriter {
  private queue: string[] = [];
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
    this.queue.push(JSON.stringify(row));
    if (this.queue.length >= this.opts.maxBatch) void context.with(ROOT_CONTEXT, () => this.flush());
    else if (!this.timer) {
      // Outside the request that happened to start the timer: a batch belongs to no one trace.
      this.timer = context.with(ROOT_CONTEXT, () => setTimeout(() => void this.flush(), this.opts.flushMs));
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
      let i = 0;
      try {
        for (; i < batch.length; i += this.opts.maxBatch) {
          await this.db.raw(
            `insert into gateway_usage (${COLUMNS})
             select ${COLUMNS} from jsonb_populate_recordset(null::gateway_usage, ?::jsonb)`,
            [`[${batch.slice(i, i + this.opts.maxBatch).join(',')}]`],
          );
        }
      } catch (err) {
        // Put back what was not written; the next flush tries again.
        const left = batch.slice(i);
        this.logger.error({ err, rows: left.length }, 'writing gateway usage failed; will retry');
        this.queue.unshift(...left.slice(0, Math.max(0, this.opts.maxQueue - this.queue.length)));
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
