import { type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { searchAttributes } from '../../temporal.config.js';
import { spawnTied, stopTied } from './children.js';
import { assertPortFree, oneLine, portFix, StartupError } from './startup-errors.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const TEMPORAL_CLI_VERSION = 'v1.5.1';

function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return (
    env.AGENT_SERVER_CACHE ??
    path.join(env.XDG_CACHE_HOME ?? path.join(env.HOME ?? os.homedir(), '.cache'), 'agent-server')
  );
}

function onPath(bin: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, bin);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** TEMPORAL_CLI_PATH, then the cache outside the clone, then PATH. */
export function findTemporalCli(explicit?: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  explicit ??= env.TEMPORAL_CLI_PATH;
  if (explicit) return existsSync(explicit) ? explicit : undefined;
  const cached = path.join(cacheDir(env), `temporal-${TEMPORAL_CLI_VERSION}`, 'temporal');
  if (existsSync(cached)) return cached;
  return onPath('temporal', env);
}

export interface EnsureCliOptions {
  /** Progress of a first-run build, one line at a time ("building …", "… 45 s", "built in 130 s"). */
  onProgress?: (line: string) => void;
  /** How often an elapsed-time line is given while building; default 15 s. */
  progressEveryMs?: number;
  /** The installer's environment (PATH to find `go`, AGENT_SERVER_CACHE); default process.env. */
  env?: NodeJS.ProcessEnv;
}

/**
 * Finds the CLI or builds it with scripts/install-temporal (Go module), saying
 * what is being built and how long it has taken, since the first build takes
 * minutes with nothing else to show.
 */
export async function ensureTemporalCli(explicit?: string, opts: EnsureCliOptions = {}): Promise<string> {
  const env = opts.env ?? process.env;
  const found = findTemporalCli(explicit, env);
  if (found) return found;
  if (explicit)
    throw new StartupError(
      `TEMPORAL_CLI_PATH=${explicit} does not exist: point it at a temporal binary, or unset it to build one`,
    );
  const progress = opts.onProgress ?? (() => undefined);
  progress(
    `building the Temporal CLI ${TEMPORAL_CLI_VERSION} from its Go module (first run only, ~2-3 min; cached in ${path.join(cacheDir(env), `temporal-${TEMPORAL_CLI_VERSION}`)})...`,
  );
  const started = Date.now();
  const elapsed = () => Math.round((Date.now() - started) / 1000);
  const ticker = setInterval(
    () => progress(`still building the Temporal CLI ${TEMPORAL_CLI_VERSION}... ${elapsed()} s`),
    opts.progressEveryMs ?? 15_000,
  );
  try {
    const tied = spawnTied(path.join(ROOT, 'scripts/install-temporal'), [], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    tied.child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    tied.child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-8_000)));
    const result = await tied.exited;
    if (result.error || result.code !== 0) {
      const last = result.error
        ? oneLine(result.error)
        : (stderr.trim().split('\n').pop() ?? `exit code ${result.code}`);
      throw new StartupError(
        last.startsWith('install-temporal:')
          ? last
          : `building the Temporal CLI failed (${last}): run scripts/install-temporal to see why, or set TEMPORAL_CLI_PATH to a temporal binary`,
      );
    }
    const cli = stdout.trim().split('\n').pop()!;
    progress(`built the Temporal CLI in ${elapsed()} s: ${cli}`);
    return cli;
  } finally {
    clearInterval(ticker);
  }
}

export function waitForPort(host: string, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const socket = createConnection({ host, port });
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline)
          reject(new Error(`nothing listening on ${host}:${port} after ${timeoutMs} ms`));
        else setTimeout(attempt, 100);
      });
    };
    attempt();
  });
}

export interface DevServerOptions {
  cliPath: string;
  port: number;
  /** undefined = headless (no Web UI). */
  uiPort?: number;
  /** undefined = in memory. */
  dbFile?: string;
  /** Where the pid is recorded so a later start can clean up after a crash. */
  pidFile?: string;
  logFile?: string;
  /** The variables that choose the ports, named in a "port in use" message. */
  portEnv?: { port?: string; uiPort?: string };
}

export interface DevServer {
  address: string;
  uiUrl?: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

/** A dev server left running by a crashed `npm start` holds the port and the SQLite file: stop it. */
export async function stopStale(pidFile: string, expectCommand: string): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number((await readFile(pidFile, 'utf8')).trim());
  if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(expectCommand)) {
      process.kill(pid, 'SIGTERM');
      if (!(await waitExit(pid, 10_000))) process.kill(pid, 'SIGKILL');
      await waitExit(pid, 5_000);
    }
  }
  await rm(pidFile, { force: true });
}

export async function startTemporalDevServer(opts: DevServerOptions): Promise<DevServer> {
  if (opts.pidFile) await stopStale(opts.pidFile, 'start-dev');
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(opts.port),
    '--log-level',
    'warn',
  ];
  if (opts.uiPort === undefined) args.push('--headless');
  else args.push('--ui-port', String(opts.uiPort));
  if (opts.dbFile) {
    await mkdir(path.dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile);
  }
  for (const [name, type] of Object.entries(searchAttributes))
    args.push('--search-attribute', `${name}=${type}`);
  // An activity scheduled by a workflow task goes straight back to the worker
  // that completed it (no poll round trip): a session turn is a chain of them.
  args.push('--dynamic-config-value', 'system.enableActivityEagerExecution=true');
  // The history service reads its transfer queue (e.g. "an activity completed:
  // dispatch the next workflow task") at most 20 times a second by default:
  // a session turn making more than ~20 steps a second then waits ~25–40 ms at
  // each step for the reader. Lifted for the embedded server, which serves one
  // installation (bench/RESULTS.md, bench/converse).
  args.push('--dynamic-config-value', 'history.transferProcessorMaxPollRPS=1000');

  const fix = (v?: string) => (v ? portFix(v) : 'choose another port, or stop that process');
  await assertPortFree(opts.port, 'Temporal dev server', fix(opts.portEnv?.port));
  if (opts.uiPort !== undefined)
    await assertPortFree(opts.uiPort, 'Temporal Web UI', fix(opts.portEnv?.uiPort));

  // Tied to this process: it never outlives it (see children.ts).
  const tied = spawnTied(opts.cliPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const child = tied.child;
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  if (opts.pidFile && child.pid) await writeFile(opts.pidFile, String(child.pid));
  const exited = tied.exited.then((r): never => {
    const last =
      output
        .trim()
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .pop() ?? 'no output';
    throw new StartupError(
      r.error
        ? `cannot run the Temporal CLI ${opts.cliPath}: ${oneLine(r.error)}`
        : `the Temporal dev server exited at start (code ${r.code ?? r.signal}): ${last.slice(0, 400)}`,
    );
  });
  exited.catch(() => undefined);
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await stopTied(tied, 'SIGTERM', 15_000);
      if (opts.pidFile) await rm(opts.pidFile, { force: true });
    })();
    return stopping;
  };
  try {
    await Promise.race([waitForPort('127.0.0.1', opts.port, 60_000), exited]);
    if (opts.uiPort !== undefined)
      await Promise.race([waitForPort('127.0.0.1', opts.uiPort, 60_000), exited]);
  } catch (err) {
    await stop();
    throw err instanceof StartupError
      ? err
      : new StartupError(`the Temporal dev server did not start: ${oneLine(err)}`);
  }

  return {
    address: `127.0.0.1:${opts.port}`,
    uiUrl: opts.uiPort === undefined ? undefined : `http://127.0.0.1:${opts.uiPort}`,
    process: child,
    stop,
  };
}
