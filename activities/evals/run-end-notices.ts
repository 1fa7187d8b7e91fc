/**
 * When a replayed turn's run ends, as Postgres announces it: the session's
 * activities notify every run event on RUN_EVENTS_CHANNEL (the API's streams
 * follow the same notifications). One LISTEN connection per worker, opened
 * when an eval first waits; while it is down, waiters fall back to reading
 * the run row (see session-turn.ts), so a lost notification costs a slower
 * wake-up, never a turn.
 */
import pg from 'pg';
import { TERMINAL_EVENTS } from '../../core/db/tables/index.js';
import { pgConnectionConfig, type DatabaseSsl } from '../../core/db/pg-ssl.js';
import type { Logger } from '../../core/logger.js';
import { RUN_EVENTS_CHANNEL } from '../../core/repositories/run-events.repository.js';

export interface RunEndWait {
  /** Resolves when the run's terminal event is notified, or the connection drops (read the row then). */
  ended: Promise<void>;
  done(): void;
}

export class RunEndNotices {
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly databaseUrl: string | undefined,
    private readonly ssl: DatabaseSsl | undefined,
    private readonly logger: Logger,
  ) {}

  wait(runId: string): RunEndWait {
    void this.connect();
    let wake!: () => void;
    const ended = new Promise<void>((resolve) => (wake = resolve));
    let set = this.waiters.get(runId);
    if (!set) this.waiters.set(runId, (set = new Set()));
    set.add(wake);
    return {
      ended,
      done: () => {
        set.delete(wake);
        if (!set.size) this.waiters.delete(runId);
      },
    };
  }

  private connect(): Promise<void> | undefined {
    if (this.client || this.connecting || !this.databaseUrl) return this.connecting;
    const client = new pg.Client(pgConnectionConfig(this.databaseUrl, this.ssl));
    client.on('notification', (n) => this.notified(n.payload));
    client.on('error', (err) => this.drop(client, err));
    client.on('end', () => this.drop(client));
    this.connecting = (async () => {
      await client.connect();
      await client.query(`listen ${RUN_EVENTS_CHANNEL}`);
      // Never what keeps a stopping worker alive.
      (client as unknown as { connection?: { stream?: { unref?(): void } } }).connection?.stream?.unref?.();
      this.client = client;
    })()
      .catch((err: unknown) => this.drop(client, err))
      .finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private drop(client: pg.Client, err?: unknown): void {
    if (err)
      this.logger.warn({ err }, 'the run-end notifications connection failed; evals read their runs instead');
    if (this.client === client) this.client = undefined;
    client.end().catch(() => undefined);
    // Whatever ended meanwhile was not heard: every waiter reads its run again.
    for (const set of this.waiters.values()) for (const wake of set) wake();
  }

  private notified(payload: string | undefined): void {
    if (!payload) return;
    let notice: { r?: string; t?: string };
    try {
      notice = JSON.parse(payload) as { r?: string; t?: string };
    } catch {
      return;
    }
    if (!notice.r || !notice.t || !TERMINAL_EVENTS.has(notice.t)) return;
    for (const wake of this.waiters.get(notice.r) ?? []) wake();
  }
}
