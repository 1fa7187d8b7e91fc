import { setTimeout as sleep } from 'node:timers/promises';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import type { Db } from '../../../core/db/knex.js';
import type { Logger } from '../../../core/logger.js';
import type { DbGatewayResponse, DbGatewayResponseInsert } from '../../../core/db/tables/index.js';
import { GatewayResponsesRepository } from '../../../core/repositories/gateway-responses.repository.js';
import { RESPONSE_ID } from '../surfaces/responses/items.js';

export interface ResponsesStoreOptions {
  /** How long an answer waits for its stored response when PostgreSQL is slow or unreachable (as the usage row). */
  saveWaitMs: number;
  /** A replica sweeps expired rows on a write at most this often. */
  sweepEveryMs: number;
}

const DEFAULTS: ResponsesStoreOptions = { saveWaitMs: 2_000, sweepEveryMs: 10 * 60_000 };

/**
 * Stored Responses API answers for `previous_response_id`, GET and DELETE.
 * Reads see one key's unexpired rows only. Expired rows are deleted by a
 * sweep that a write starts now and then (no timer to stop, and a replica
 * that stores nothing has nothing to sweep); the sweep is one statement per
 * chunk under an advisory lock, so replicas running it at once are safe.
 */
export class ResponsesStore {
  private readonly repo: GatewayResponsesRepository;
  private lastSweep = 0;

  constructor(
    db: Db,
    private readonly retentionDays: number,
    private readonly logger: Logger,
    private readonly opts: ResponsesStoreOptions = DEFAULTS,
  ) {
    this.repo = new GatewayResponsesRepository(db);
  }

  /** The conversation a response continues: its input items and then its output items. */
  async conversation(id: string, keyId: string): Promise<unknown[] | undefined> {
    // Anything but our own id format names nothing (and never reaches Postgres, e.g. with a NUL).
    if (!RESPONSE_ID.test(id)) return undefined;
    const row = await this.repo.conversation(id, keyId);
    return row && [...row.input_items, ...row.output_items];
  }

  async find(id: string, keyId: string): Promise<DbGatewayResponse | undefined> {
    return RESPONSE_ID.test(id) ? this.repo.find(id, keyId) : undefined;
  }

  async delete(id: string, keyId: string): Promise<boolean> {
    return RESPONSE_ID.test(id) ? this.repo.delete(id, keyId) : false;
  }

  /**
   * Writes the row (one statement; nothing when its key has been deleted
   * meanwhile) and resolves once it is in, or after
   * `saveWaitMs` with the write still going; never rejects: the answer goes
   * out regardless, and a failure is logged (a follow-up naming it gets a 404).
   */
  async save(row: DbGatewayResponseInsert): Promise<void> {
    this.sweepNowAndThen();
    const write = this.repo.insert(row, this.retentionDays).then(
      (stored) => {
        // Its key was deleted while it was being answered: deleting a key deletes its responses.
        if (!stored)
          this.logger.info(
            { response_id: row.id },
            'not storing a Responses API answer: its key was deleted',
          );
        return true;
      },
      (err: unknown) => {
        this.logger.error({ err, response_id: row.id }, 'storing a Responses API answer failed');
        return true;
      },
    );
    const timer = new AbortController();
    const waited = sleep(this.opts.saveWaitMs, false, { signal: timer.signal, ref: false }).catch(() => true);
    const inTime = await Promise.race([write, waited]);
    timer.abort();
    if (!inTime)
      this.logger.warn(
        { response_id: row.id },
        'answering before its Responses API answer is stored (slow database)',
      );
  }

  /** Deletes expired rows now; returns how many (0 when another replica is sweeping). */
  sweep(): Promise<number> {
    return this.repo.sweepExpired();
  }

  private sweepNowAndThen(): void {
    const now = Date.now();
    if (now - this.lastSweep < this.opts.sweepEveryMs) return;
    this.lastSweep = now;
    // Housekeeping, not part of the request that happened to start it (nor of its trace).
    void context.with(ROOT_CONTEXT, () =>
      this.sweep().catch((err: unknown) =>
        this.logger.warn({ err }, 'sweeping expired Responses API answers failed'),
      ),
    );
  }
}
