import type { ChangeFeed, RunEventNotice } from '../cache/change-feed.js';
import type { Db } from '../../core/db/knex.js';
import { TERMINAL_EVENTS } from '../../core/db/tables/index.js';
import { RunEventsRepository, type RunEvent } from '../../core/repositories/run-events.repository.js';

/** While nothing is notified, a reader still looks at the table this often (a missed notification costs at most this). */
const POLL_MS = 1_000;

interface Subscriber {
  buffer: RunEvent[];
  wake: () => void;
}

/**
 * A run's events for any number of readers on this replica: one LISTEN
 * connection (the change feed) wakes them, the run_events table is the truth.
 * An event small enough to ride in its notification is delivered from it;
 * otherwise (or after a gap or a reconnect) the reader reads the table.
 */
export class RunEventsHub {
  private readonly byRun = new Map<string, Set<Subscriber>>();
  private readonly runEvents: RunEventsRepository;

  constructor(db: Db, feed: ChangeFeed) {
    this.runEvents = new RunEventsRepository(db);
    feed.subscribeRunEvents((notice) => this.dispatch(notice));
  }

  private dispatch(notice: RunEventNotice | 'reconnect'): void {
    if (notice === 'reconnect') {
      for (const subs of this.byRun.values()) for (const s of subs) s.wake();
      return;
    }
    const subs = this.byRun.get(notice.r);
    if (!subs) return;
    for (const s of subs) {
      if (notice.d) s.buffer.push({ seq: notice.s, type: notice.t as RunEvent['type'], data: notice.d });
      s.wake();
    }
  }

  /**
   * Events after `afterSeq`, in order, until the run's terminal event (which
   * is yielded) or `signal` aborts.
   */
  async *events(runId: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<RunEvent> {
    let last = afterSeq;
    let woken = false;
    let resolveWake: (() => void) | undefined;
    const sub: Subscriber = {
      buffer: [],
      wake: () => {
        woken = true;
        resolveWake?.();
      },
    };
    let subs = this.byRun.get(runId);
    if (!subs) this.byRun.set(runId, (subs = new Set()));
    subs.add(sub);
    const onAbort = () => sub.wake();
    signal.addEventListener('abort', onAbort);
    try {
      let readTable = true;
      while (!signal.aborted) {
        if (readTable) {
          readTable = false;
          const rows = await this.runEvents.read(runId, last);
          for (const ev of rows) {
            last = ev.seq;
            yield ev;
            if (TERMINAL_EVENTS.has(ev.type)) return;
          }
          if (rows.length === 1_000) {
            readTable = true;
            continue;
          }
        }
        // Events from notifications, as long as they follow on without a gap.
        sub.buffer.sort((a, b) => a.seq - b.seq);
        while (sub.buffer.length) {
          const ev = sub.buffer[0]!;
          if (ev.seq <= last) {
            sub.buffer.shift();
            continue;
          }
          if (ev.seq !== last + 1) {
            readTable = true;
            break;
          }
          sub.buffer.shift();
          last = ev.seq;
          yield ev;
          if (TERMINAL_EVENTS.has(ev.type)) return;
        }
        if (readTable) continue;
        if (!woken) {
          const timedOut = await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(true), POLL_MS);
            resolveWake = () => {
              clearTimeout(timer);
              resolve(false);
            };
          });
          resolveWake = undefined;
          // A timeout, or a notification without its data: look at the table.
          if (timedOut) readTable = true;
        }
        woken = false;
        if (sub.buffer.length === 0) readTable = true;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      subs.delete(sub);
      if (subs.size === 0) this.byRun.delete(runId);
    }
  }
}
