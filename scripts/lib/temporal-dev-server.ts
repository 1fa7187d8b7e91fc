import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { searchAttributes } from '../../temporal.config.js';

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const TEMPORAL_CLI_VERSION = 'v1.5.1';

function cacheDir(): string {
  return (
    process.env.AGENT_SERVER_CACHE ??
    path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'agent-server')
  );
}

function onPath(bin: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, bin);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** TEMPORAL_CLI_PATH, then the cache outside the clone, then PATH. */
export function findTemporalCli(explicit = process.env.TEMPORAL_CLI_PATH): string | undefined {
  if (explicit) return existsSync(explicit) ? explicit : undefined;
  const cached = path.join(cacheDir(), `temporal-${TEMPORAL_CLI_VERSION}`, 'temporal');
  if (existsSync(cached)) return cached;
  return onPath('temporal');
}

/** Finds the CLI or builds it with scripts/install-temporal (Go module). */
export async function ensureTemporalCli(explicit?: string): Promise<string> {
  const found = findTemporalCli(explicit);
  if (found) return found;
  if (explicit) throw new Error(`TEMPORAL_CLI_PATH=${explicit} does not exist`);
  const { stdout } = await execFileAsync(path.join(ROOT, 'scripts/install-temporal'), [], {
    maxBuffer: 1024 * 1024,
  }).catch((err: { stderr?: string }) => {
    throw new Error((err.stderr ?? '').trim().split('\n').pop() ?? 'install-temporal failed');
  });
  return stdout.trim().split('\n').pop()!;
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

  const child = spawn(opts.cliPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8_000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  if (opts.pidFile) await writeFile(opts.pidFile, String(child.pid));
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) =>
      reject(new Error(`temporal dev server exited (code ${code}): ${output.trim().slice(-2_000)}`)),
    ),
  );
  exited.catch(() => undefined);
  await Promise.race([waitForPort('127.0.0.1', opts.port, 60_000), exited]);
  if (opts.uiPort !== undefined) await Promise.race([waitForPort('127.0.0.1', opts.uiPort, 60_000), exited]);

  let stopping: Promise<void> | undefined;
  return {
    address: `127.0.0.1:${opts.port}`,
    uiUrl: opts.uiPort === undefined ? undefined : `http://127.0.0.1:${opts.uiPort}`,
    process: child,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          const exit = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
          await exit;
          clearTimeout(timer);
        }
        if (opts.pidFile) await rm(opts.pidFile, { force: true });
      })();
      return stopping;
    },
  };
}
