/**
 * A small "cluster" for the replica proof (issue 26): its own embedded
 * PostgreSQL and Temporal dev server (with a database file, so both can be
 * restarted with their state), two API and two worker processes started with
 * the production entry points, every process tied to this one (children.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawnTied, stopTied, type TiedChild } from '../../../scripts/lib/children.js';
import { startEmbeddedPostgres, type EmbeddedPg } from '../../../scripts/lib/embedded-postgres.js';
import {
  findTemporalCli,
  startTemporalDevServer,
  type DevServer,
} from '../../../scripts/lib/temporal-dev-server.js';
import { createDb, migrateLatest, type Db } from '../../../core/db/knex.js';
import { freePort } from '../../helpers/ports.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

export interface Proc {
  name: string;
  tied: TiedChild;
  output(): string;
}

export interface ApiProc extends Proc {
  url: string;
}

/** Last `max` characters of a process's output. */
function collect(tied: TiedChild, max = 20_000): () => string {
  let out = '';
  const on = (c: Buffer) => (out = (out + c.toString()).slice(-max));
  tied.child.stdout?.on('data', on);
  tied.child.stderr?.on('data', on);
  return () => out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function alive(p: Proc): boolean {
  return p.tied.child.exitCode === null && p.tied.child.signalCode === null;
}

export async function killHard(p: Proc): Promise<void> {
  if (!alive(p)) return;
  p.tied.child.kill('SIGKILL');
  await p.tied.exited;
}

export class Cluster {
  dir = '';
  pg!: EmbeddedPg;
  pgPort = 0;
  temporal!: DevServer;
  temporalPort = 0;
  dbFile = '';
  db!: Db;
  env: Record<string, string> = {};
  apis: ApiProc[] = [];
  workers: Proc[] = [];
  private all: Proc[] = [];
  private seq = 0;

  async start(): Promise<void> {
    this.dir = await mkdtemp(path.join(os.tmpdir(), 'replicas-'));
    // The postgres system user (when running as root) must reach the data dir.
    await chmod(this.dir, 0o755);
    this.pgPort = await freePort();
    await this.startPg();
    this.temporalPort = await freePort();
    this.dbFile = path.join(this.dir, 'temporal.db');
    await this.startTemporal();
    this.db = createDb(this.pg.url, { max: 4 });
    await migrateLatest(this.db);
    this.env = {
      DATABASE_URL: this.pg.url,
      TEMPORAL_ADDRESS: `127.0.0.1:${this.temporalPort}`,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      TEMPORAL_TASK_QUEUE: `replicas-${randomUUID()}`,
      LOG_LEVEL: 'info',
      OTEL_SDK_DISABLED: 'true',
      // Longer than a Temporal dev server restart takes on a busy CI machine (up to ~15 s
      // seen): a model call outlives the outage instead of timing out and being made again.
      // A killed worker's calls are retried after this long.
      SESSION_MODEL_HEARTBEAT_TIMEOUT_MS: '20000',
    };
  }

  async startPg(): Promise<void> {
    this.pg = await startEmbeddedPostgres({
      dataDir: path.join(this.dir, 'pg'),
      port: this.pgPort,
      database: 'replicas',
    });
  }

  async startTemporal(): Promise<void> {
    const cliPath = findTemporalCli();
    if (!cliPath) throw new Error('no Temporal CLI (TEMPORAL_CLI_PATH)');
    this.temporal = await startTemporalDevServer({ cliPath, port: this.temporalPort, dbFile: this.dbFile });
  }

  async restartTemporal(downMs: number): Promise<void> {
    await this.temporal.stop();
    await sleep(downMs);
    await this.startTemporal();
  }

  async restartPg(downMs: number): Promise<void> {
    await this.pg.stop();
    await sleep(downMs);
    await this.startPg();
  }

  private spawnNode(name: string, entry: string, extra: Record<string, string>): Proc {
    const tied = spawnTied(process.execPath, ['--import', 'tsx', entry], {
      cwd: ROOT,
      env: { ...process.env, ...this.env, ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
      stopSignal: 'SIGKILL',
    });
    const p: Proc = { name, tied, output: collect(tied) };
    this.all.push(p);
    return p;
  }

  /** An API process (`npm run api`'s entry point), resolved once /health/ready answers 200. */
  async spawnApi(): Promise<ApiProc> {
    const port = await freePort();
    const p = this.spawnNode(`api-${++this.seq}`, 'api/server.ts', { PORT: String(port) });
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (!alive(p)) throw new Error(`${p.name} exited early: ${p.output()}`);
      const ready = await fetch(`${url}/api/agent-server/health/ready`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) return { ...p, url };
      if (Date.now() > deadline) throw new Error(`${p.name} not ready: ${p.output()}`);
      await sleep(200);
    }
  }

  /** A worker process (`npm run worker`'s entry point), resolved once it says it runs. */
  async spawnWorker(): Promise<Proc> {
    const p = this.spawnNode(`worker-${++this.seq}`, 'activities/worker.ts', {});
    const deadline = Date.now() + 90_000;
    while (!p.output().includes('worker running')) {
      if (!alive(p)) throw new Error(`${p.name} exited early: ${p.output()}`);
      if (Date.now() > deadline) throw new Error(`${p.name} did not start: ${p.output()}`);
      await sleep(100);
    }
    return p;
  }

  /** SIGTERM and wait for the exit (SIGKILL after `graceMs`). */
  async terminate(p: Proc, graceMs = 40_000): Promise<{ code: number | null; signal: string | null }> {
    const r = await Promise.race([
      stopTied(p.tied, 'SIGTERM', graceMs).then(() => p.tied.exited),
      sleep(graceMs + 5_000).then(() => ({ code: null, signal: 'timeout' as const })),
    ]);
    return { code: r.code, signal: r.signal };
  }

  async stop(): Promise<void> {
    await Promise.all(this.all.map((p) => killHard(p).catch(() => undefined)));
    await this.db?.destroy().catch(() => undefined);
    await this.temporal?.stop().catch(() => undefined);
    await this.pg?.stop().catch(() => undefined);
    if (this.pg && this.pg.dataDir !== path.join(this.dir, 'pg'))
      await rm(this.pg.dataDir, { recursive: true, force: true }).catch(() => undefined);
    if (this.dir) await rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** POST/GET JSON against an API, throwing on a non-200. */
export async function call<T = Record<string, string>>(
  url: string,
  method: string,
  p: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const res = await fetch(`${url}${p}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} ${p}: ${res.status} ${text}`);
  return (JSON.parse(text) as { data: T }).data;
}
