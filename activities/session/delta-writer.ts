import type { Db } from '../../core/db/knex.js';
import { isDatabaseUnavailable } from '../../core/db/unavailable.js';
import { RunEventsRepository } from '../../core/repositories/run-events.repository.js';

/**
 * Turns a model's text stream into `message.delta` run events without
 * holding it back: the first delta is written as soon as the text already
 * received has been read (the next turn of the event loop), and whatever
 * arrives while a write is in flight goes out together in the next one. An
 * answer that arrived whole is not written here at all: `finish` hands it to
 * the statement that stores the answer.
 *
 * A retried step (the worker died mid-answer) replays the answer from the
 * start: text that readers already received in an earlier attempt (`prior`)
 * is not sent again while the new answer repeats it; if the new answer
 * diverges, a `message.restarted` event tells readers to drop the step's text
 * and the new answer follows in full.
 */
export class DeltaWriter {
  private full = '';
  private sent = 0;
  private matchingPrior: boolean;
  private restartPending = false;
  private writing: Promise<void> | undefined;
  private failure: Error | undefined;
  /** After `finish`, nothing more is written. */
  private closed = false;
  private scheduled: NodeJS.Immediate | undefined;
  /** Set while the database is unavailable: the next write is tried when it fires. */
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly events: RunEventsRepository;

  constructor(
    db: Db,
    private readonly runId: string,
    private readonly step: number,
    private readonly prior: string,
  ) {
    this.events = new RunEventsRepository(db);
    this.matchingPrior = prior.length > 0;
  }

  push(text: string): void {
    this.full += text;
    if (this.matchingPrior) {
      const n = Math.min(this.full.length, this.prior.length);
      if (this.full.slice(0, n) !== this.prior.slice(0, n)) this.diverge();
      else {
        this.sent = n;
        if (this.full.length <= this.prior.length) return;
        this.matchingPrior = false;
      }
    }
    // After the text already buffered has been read: one write for all of it.
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      this.kick();
    });
  }

  /** Writes what is left; a short answer that stopped inside the earlier text is a divergence too. */
  async close(): Promise<void> {
    if (this.matchingPrior && this.full.length < this.prior.length) this.diverge();
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.stopRetrying();
    this.kick();
    while (this.writing) await this.writing;
    if (this.failure) throw this.failure;
  }

  /**
   * Waits for the write in flight and hands back what is still unsent, as
   * events for the caller to write in its own statement (the step's answer
   * goes out with them): one round trip fewer at the end of a step.
   */
  async finish(): Promise<
    Array<{ type: 'message.restarted' | 'message.delta'; data: Record<string, unknown> }>
  > {
    if (this.matchingPrior && this.full.length < this.prior.length) this.diverge();
    this.closed = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.stopRetrying();
    while (this.writing) await this.writing;
    if (this.failure) throw this.failure;
    const events: Array<{ type: 'message.restarted' | 'message.delta'; data: Record<string, unknown> }> = [];
    if (this.restartPending) {
      this.restartPending = false;
      events.push({ type: 'message.restarted', data: { step: this.step } });
    }
    if (this.sent < this.full.length) {
      events.push({ type: 'message.delta', data: { step: this.step, text: this.full.slice(this.sent) } });
      this.sent = this.full.length;
    }
    return events;
  }

  private diverge(): void {
    this.matchingPrior = false;
    this.restartPending = true;
    this.sent = 0;
  }

  private kick(): void {
    if (this.writing || this.failure || this.closed || this.retryTimer) return;
    this.writing = this.drain().finally(() => {
      this.writing = undefined;
      const more = this.restartPending || this.sent < this.full.length;
      if (!this.failure && !this.closed && !this.retryTimer && more) this.kick();
    });
  }

  private stopRetrying(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  private async drain(): Promise<void> {
    const sentBefore = this.sent;
    let restartUnwritten = false;
    try {
      if (this.restartPending) {
        this.restartPending = false;
        restartUnwritten = true;
        await this.events.append(this.runId, 'message.restarted', { step: this.step });
        restartUnwritten = false;
      }
      if (this.sent < this.full.length) {
        const text = this.full.slice(this.sent);
        this.sent = this.full.length;
        await this.events.append(this.runId, 'message.delta', { step: this.step, text });
      }
    } catch (err) {
      if (!isDatabaseUnavailable(err)) {
        this.failure = err instanceof Error ? err : new Error('writing a run event failed');
        return;
      }
      // The database is away (a restart): the text waits, for the next try or for the
      // step's own statement (`finish`), which waits the outage out. Failing here would
      // fail the model call, and its retry would pay for the answer again.
      this.sent = sentBefore;
      if (restartUnwritten) this.restartPending = true;
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.kick();
      }, 1_000);
      this.retryTimer.unref();
    }
  }
}
