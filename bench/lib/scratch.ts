import { type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createDb, migrateLatest, type Db } from '../../core/db/knex.js';
import type { MemFigures, ProbeRequest } from './mem-probe.js';
import { spawnTied } from '../../scripts/lib/children.js';
import { waitForPort } from '../../scripts/lib/temporal-dev-server.js';
import { freePort } from '../../test/helpers/ports.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A throwaway database with migrations applied; dropped by `drop()`. */
export async function scratchDatabase(
  prefix: string,
): Promise<{ url: string; db: Db; drop(): Promise<void> }> {
  const name = `${prefix}_${Date.now()}_${process.pid}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  const db = createDb(u.toString(), { max: 4 });
  await migrateLatest(db);
  return {
    url: u.toString(),
    db,
    async drop() {
      await db.destroy();
      const c = new pg.Client({ connectionString: ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

interface ProbeReply {
  id: number;
  figures?: MemFigures;
  file?: string;
}

export interface Child {
  url: string;
  proc: ChildProcess;
  rssMb(): Promise<number>;
  /** Only with `probe: true`: memory figures from inside the process, after a full GC when `gc`. */
  mem(gc?: boolean): Promise<MemFigures>;
  /** Only with `probe: true`: writes a heap snapshot, returns its path. */
  heapSnapshot(file: string): Promise<string>;
  /** Only with `probe: true`: CPU profiling from now until `stopProfile` writes the .cpuprofile file. */
  startProfile(): Promise<void>;
  stopProfile(file: string): Promise<string>;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  /** Node flags before the entry point (e.g. V8 heap flags). */
  nodeArgs?: string[];
  /** Preload bench/lib/mem-probe.ts and open an IPC channel to it. */
  probe?: boolean;
}

/** Runs a TypeScript entry point as its own process (so load generation does not share its event loop). */
export async function spawnServer(
  entry: string,
  env: Record<string, string>,
  opts: SpawnOptions = {},
): Promise<Child> {
  const port = await freePort();
  const args = [
    ...(opts.nodeArgs ?? []),
    '--import',
    'tsx',
    ...(opts.probe ? ['--import', './bench/lib/mem-probe.ts'] : []),
    entry,
  ];
  // Tied to the bench: it never outlives it, even when the bench fails half-way.
  const { child: proc } = spawnTied(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      LOG_LEVEL: 'error',
      SECRETS_KEY: randomBytes(32).toString('base64'),
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit', ...(opts.probe ? (['ipc'] as const) : [])],
  });
  let nextId = 0;
  const ask = <T>(req: Omit<ProbeRequest, 'id'>, pick: (reply: ProbeReply) => T): Promise<T> => {
    if (!opts.probe) return Promise.reject(new Error('spawnServer: started without probe: true'));
    const id = ++nextId;
    return new Promise<T>((resolve) => {
      const onMessage = (reply: ProbeReply) => {
        if (reply.id !== id) return;
        proc.off('message', onMessage);
        resolve(pick(reply));
      };
      proc.on('message', onMessage);
      proc.send({ ...req, id });
    });
  };
  await waitForPort('127.0.0.1', port, 30_000);
  return {
    url: `http://127.0.0.1:${port}`,
    proc,
    async rssMb() {
      const { readFile } = await import('node:fs/promises');
      const status = await readFile(`/proc/${proc.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    },
    mem: (gc = false) => ask({ op: 'mem', gc }, (r) => r.figures!),
    heapSnapshot: (file) => ask({ op: 'snapshot', file }, (r) => r.file!),
    startProfile: () => ask({ op: 'profile-start' }, () => undefined),
    stopProfile: (file) => ask({ op: 'profile-stop', file }, (r) => r.file!),
    async stop() {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
