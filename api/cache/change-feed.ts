import type { Knex } from 'knex';
import pg from 'pg';
import type { Db } from '../../core/db/knex.js';
import { pgConnectionConfig, type DatabaseSsl } from '../../core/db/pg-ssl.js';
import type { Logger } from '../../core/logger.js';
import { RUN_EVENTS_CHANNEL } from '../../core/repositories/run-events.repository.js';

/** One channel for every cached table; payload `{"table": …, "id": …}`. */
export const CHANGE_CHANNEL = 'agent_server_changes';

export interface Change {
  table: string;
  id: string;
}

/**
 * Announces a change to every replica. Call it inside the writing transaction:
 * Postgres delivers the notification only if, and when, the transaction commits.
 */
export async function notifyChange(conn: Db | Knex.Transaction, table: string, id: string): Promise<void> {
  await conn.raw('select pg_notify(?, ?)', [CHANGE_CHANNEL, JSON.stringify({ table, id })]);
}

type Listener = (change: Change | 'all') => void;

/** A run event notification: run id, seq, type, and the event's data when it was small enough to inline. */
export interface RunEventNotice {
  r: string;
  s: number;
  t: string;
  d?: Record<string, unknown> | null;
}
type RunListener = (notice: RunEventNotice | 'reconnect') => void;

/**
 * A dedicated LISTEN connection. While it is down, `live` is false and caches
 * must not serve from memory (they would miss invalidations); when it drops,
 * listeners get 'all' so everything cached is thrown away.
 */
export class ChangeFeed {
  private client: pg.Client | undefined;
  private listeners = new Set<Listener>();
  private runListeners = new Set<RunListener>();
  private stopped = false;
  private retryMs = 250;
  private timer: NodeJS.Timeout | undefined;
  live = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly logger: Logger,
    /** DATABASE_SSL_* (`config.database.ssl`), as for the pools. */
    private readonly ssl?: DatabaseSsl,
  ) {}

  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Run events (the converse streams' wake-up calls); 'reconnect' means some may have been missed. */
  subscribeRunEvents(fn: RunListener): () => void {
    this.runListeners.add(fn);
    return () => this.runListeners.delete(fn);
  }

  private emit(change: Change | 'all'): void {
    for (const fn of this.listeners) fn(change);
    if (change === 'all') for (const fn of this.runListeners) fn('reconnect');
  }

  start(): void {
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({
      ...pgConnectionConfig(this.databaseUrl, this.ssl),
      connectionTimeoutMillis: 5_000,
    });
    this.client = client;
    const down = (err?: unknown) => {
      if (this.client !== client) return;
      this.client = undefined;
      if (this.live)
        this.logger.warn({ err }, 'change feed lost its connection; caches bypassed until it is back');
      this.live = false;
      this.emit('all');
      client.removeAllListeners();
      client.on('error', () => undefined);
      void client.end().catch(() => undefined);
      if (!this.stopped) {
        this.timer = setTimeout(() => void this.connect(), this.retryMs);
        this.timer.unref();
        this.retryMs = Math.min(this.retryMs * 2, 10_000);
      }
    };
    client.on('error', down);
    client.on('end', () => down());
    client.on('notification', (msg) => {
      if (msg.channel === RUN_EVENTS_CHANNEL && msg.payload) {
        let notice: RunEventNotice;
        try {
          notice = JSON.parse(msg.payload) as RunEventNotice;
        } catch {
          return;
        }
        for (const fn of this.runListeners) fn(notice);
        return;
      }
      if (msg.channel !== CHANGE_CHANNEL || !msg.payload) return;
      try {
        const change = JSON.parse(msg.payload) as Change;
        this.emit(change);
      } catch {
        this.emit('all');
      }
    });
    try {
      await client.connect();
      await client.query(`listen ${CHANGE_CHANNEL}; listen ${RUN_EVENTS_CHANNEL}`);
      if (this.client !== client) return;
      // Anything cached before this point may have missed a change.
      this.emit('all');
      this.live = true;
      this.retryMs = 250;
    } catch (err) {
      down(err);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.live = false;
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners();
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
    }
  }
}

/**
 * A read-through cache of one table's rows by id, correct across replicas:
 * entries are dropped on a change notification (or locally by the writer, for
 * read-your-writes), served only while the feed is live, and expire after
 * `ttlMs` as a last line of defence.
 */
export class ReadCache<T> {
  private entries = new Map<string, { value: T; expires: number }>();
  private generation = 0;
  private keyGenerations = new Map<string, number>();

  constructor(
    private readonly feed: ChangeFeed,
    private readonly table: string,
    private readonly opts: { ttlMs: number; max: number; alsoClearOn?: string[] } = {
      ttlMs: 60_000,
      max: 10_000,
    },
  ) {
    feed.subscribe((change) => {
      // An entry built from several tables (e.g. a key's providers) is dropped
      // whole when any of them changes; id '*' means "any row of the table".
      if (
        change === 'all' ||
        opts.alsoClearOn?.includes(change.table) ||
        (change.table === this.table && change.id === '*')
      ) {
        this.clear();
      } else if (change.table === this.table) this.invalidate(change.id);
    });
  }

  async get(id: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    if (!this.feed.live) return load();
    const hit = this.entries.get(id);
    if (hit && hit.expires > Date.now()) return hit.value;
    // A change that lands while we load must win over what we loaded.
    const generation = this.generation;
    const keyGeneration = this.keyGenerations.get(id) ?? 0;
    const value = await load();
    if (
      value !== undefined &&
      this.feed.live &&
      generation === this.generation &&
      keyGeneration === (this.keyGenerations.get(id) ?? 0)
    ) {
      if (this.entries.size >= this.opts.max) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(id, { value, expires: Date.now() + this.opts.ttlMs });
    }
    return value;
  }

  invalidate(id: string): void {
    this.entries.delete(id);
    this.keyGenerations.set(id, (this.keyGenerations.get(id) ?? 0) + 1);
    if (this.keyGenerations.size > this.opts.max) {
      // Bound memory: forgetting per-key generations is safe once the global one moves.
      this.keyGenerations.clear();
      this.generation++;
    }
  }

  clear(): void {
    this.entries.clear();
    this.keyGenerations.clear();
    this.generation++;
  }
}
