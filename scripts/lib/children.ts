/**
 * Child processes that never outlive the process that started them
 * (`npm start`, the test global setup, benches):
 * - on Linux they are started through util-linux's `setpriv --pdeathsig`, so
 *   the kernel signals them when their parent dies for any reason, SIGKILL
 *   and the OOM killer included (setpriv execs: the pid is the program's own);
 * - every exit of this process (process.exit, an uncaught exception or
 *   unhandled rejection, the end of the event loop) signals those still running.
 * Spawn failures ('error' events: EACCES, ENOENT) never go unhandled: they
 * surface through `exited`, like an early exit.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const live = new Map<ChildProcess, NodeJS.Signals>();
let hooked = false;

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const [child, signal] of live) {
      try {
        child.kill(signal);
      } catch {
        // already gone
      }
    }
  });
}

let setprivPath: string | null | undefined;
function setpriv(): string | undefined {
  if (setprivPath === undefined) {
    setprivPath = null;
    if (process.platform === 'linux') {
      for (const dir of ['/usr/bin', '/bin', ...(process.env.PATH ?? '').split(path.delimiter)]) {
        const candidate = path.join(dir, 'setpriv');
        if (dir && existsSync(candidate)) {
          setprivPath = candidate;
          break;
        }
      }
    }
  }
  return setprivPath ?? undefined;
}

export interface TiedChild {
  child: ChildProcess;
  /** Resolves with how it ended (never rejects): a failure to spawn is `{ error }`. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>;
}

/**
 * spawn(), tied to this process: `stopSignal` is what the child gets when this
 * process exits or dies (SIGTERM by default; SIGINT is PostgreSQL's fast shutdown).
 */
export function spawnTied(
  command: string,
  args: string[],
  options: SpawnOptions & { stopSignal?: NodeJS.Signals },
): TiedChild {
  const { stopSignal = 'SIGTERM', ...spawnOptions } = options;
  const wrapper = setpriv();
  const child = wrapper
    ? spawn(wrapper, ['--pdeathsig', stopSignal, '--', command, ...args], {
        ...spawnOptions,
        detached: false,
      })
    : spawn(command, args, { ...spawnOptions, detached: false });
  hookExit();
  live.set(child, stopSignal);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>(
    (resolve) => {
      child.once('error', (error) => {
        live.delete(child);
        resolve({ code: null, signal: null, error });
      });
      child.once('exit', (code, signal) => {
        live.delete(child);
        resolve({ code, signal });
      });
    },
  );
  return { child, exited };
}

/** Signals `child`, escalating to SIGKILL after `graceMs`; resolves when it is gone. */
export async function stopTied(
  tied: TiedChild,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = 15_000,
): Promise<void> {
  const { child } = tied;
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) {
    await tied.exited;
    return;
  }
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await tied.exited;
  clearTimeout(timer);
}
