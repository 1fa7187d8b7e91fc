/**
 * Runs one command (bash -c, or a python script on stdin) and collects the tool's result (contracts.ts).
 * Each command gets its own process group so a timeout can kill the whole
 * tree it spawned, not just the shell.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import type { CommandResult, ExecOptions } from '../contracts.js';
import { BadRequestError } from '../errors.js';
import type { ForkServer } from './fork-server.js';
import { resolveInRoot } from './resolve-path.js';

export interface ExecContext {
  root: string;
  maxOutputBytes: number;
  /** Environment every command starts from; the daemon's own secrets are already removed. */
  baseEnv: Record<string, string>;
  /** Starts commands faster than spawn() when available (see fork-server.ts). */
  forkServer?: ForkServer;
}

/** The sandbox tool promises full bash; fall back to sh only for custom images without it. */
export const SHELL = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
export const PYTHON = ['/usr/bin/python3', '/usr/local/bin/python3'].find((p) => existsSync(p)) ?? 'python3';

/** Once the main process has exited, how long to wait for its output pipes before returning (background jobs may hold them open). */
const PIPE_GRACE_MS = 200;

class OutputBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly cap: number) {}
  push(chunk: Buffer): void {
    const room = this.cap - this.size;
    if (room <= 0) {
      this.truncated = true;
      return;
    }
    if (chunk.length > room) {
      this.truncated = true;
      chunk = chunk.subarray(0, room);
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

async function resolveWorkdir(root: string, workdir: string | undefined): Promise<string> {
  if (workdir === undefined) return root;
  const { real, exists } = await resolveInRoot(root, workdir);
  if (!exists || !(await stat(real)).isDirectory())
    throw new BadRequestError(`workdir "${workdir}" is not a directory in the sandbox root`);
  return real;
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is already gone.
  }
}

/** A started command, however it was started. */
interface Running {
  /** Resolves when the main process exits; rejects when it could not be started. */
  exit: Promise<{ code: number | null; signal: number }>;
  /** Resolves when both output pipes have ended. */
  pipesEnded: Promise<void>;
  killGroup(): void;
  /** Stops reading output (a background job may hold the pipes open). */
  dropPipes(): void;
}

function launchWithSpawn(
  file: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  input: string | undefined,
  stdout: OutputBuffer,
  stderr: OutputBuffer,
): Running {
  const child = spawn(file, args, {
    cwd,
    env,
    detached: true, // new process group, killable as a whole
    stdio: [input !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  const outPipe = child.stdout!; // stdio is 'pipe' for both
  const errPipe = child.stderr!;
  outPipe.on('data', (c: Buffer) => stdout.push(c));
  errPipe.on('data', (c: Buffer) => stderr.push(c));
  if (input !== undefined && child.stdin) {
    child.stdin.on('error', () => {}); // the command exited before reading it all
    child.stdin.end(input);
  }
  const exit = new Promise<{ code: number | null; signal: number }>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      resolve({ code, signal: signal ? (osConstants.signals[signal] ?? 9) : 0 }),
    );
  });
  return {
    exit,
    pipesEnded: Promise.all([streamEnded(outPipe), streamEnded(errPipe)]).then(() => {}),
    killGroup: () => killGroup(child.pid),
    dropPipes: () => {
      outPipe.destroy();
      errPipe.destroy();
    },
  };
}

function launchWithForkServer(
  server: ForkServer,
  file: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  input: string | undefined,
  cap: number,
  stdout: OutputBuffer,
  stderr: OutputBuffer,
): Running {
  let pid: number | undefined;
  let killWanted = false;
  let outEnded!: () => void;
  let errEnded!: () => void;
  const pipesEnded = Promise.all([
    new Promise<void>((r) => (outEnded = r)),
    new Promise<void>((r) => (errEnded = r)),
  ]).then(() => {});
  let jobId = 0;
  const exit = new Promise<{ code: number | null; signal: number }>((resolve, reject) => {
    jobId = server.launch(
      { argv: [file, ...args], cwd, env, cap, input },
      {
        onPid: (p) => {
          pid = p;
          if (killWanted) killGroup(p);
        },
        onStdout: (c) => stdout.push(c),
        onStderr: (c) => stderr.push(c),
        onStdoutEnd: () => outEnded(),
        onStderrEnd: () => errEnded(),
        onExit: (code, signal) => resolve({ code, signal }),
        onFail: (message) => {
          outEnded();
          errEnded();
          reject(new Error(message));
        },
      },
    );
  });
  return {
    exit,
    pipesEnded,
    killGroup: () => {
      killWanted = true;
      killGroup(pid);
    },
    dropPipes: () => server.drop(jobId),
  };
}

export async function execCommand(
  ctx: ExecContext,
  kind: 'bash' | 'python',
  source: string,
  options: ExecOptions,
  onSpawn?: (kill: () => void) => () => void,
): Promise<CommandResult> {
  const cwd = await resolveWorkdir(ctx.root, options.workdir);
  const started = performance.now();
  const [file, args] = kind === 'bash' ? [SHELL, ['-c', source]] : [PYTHON, ['-']];
  const env = { ...ctx.baseEnv, ...options.env };
  const input = kind === 'python' ? source : undefined;
  const stdout = new OutputBuffer(ctx.maxOutputBytes);
  const stderr = new OutputBuffer(ctx.maxOutputBytes);
  const server = ctx.forkServer?.available ? ctx.forkServer : undefined;
  const running = server
    ? launchWithForkServer(server, file, args, cwd, env, input, ctx.maxOutputBytes, stdout, stderr)
    : launchWithSpawn(file, args, cwd, env, input, stdout, stderr);
  const unregister = onSpawn?.(() => running.killGroup()) ?? (() => {});

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    running.killGroup();
  }, options.timeoutMs);

  try {
    const exit = await running.exit;
    await waitForPipes(running);
    const duration = Math.round(performance.now() - started);
    const result: CommandResult = {
      stdout: stdout.text(),
      stderr: stderr.text(),
      exit_code: timedOut ? 124 : (exit.code ?? 128 + (exit.signal || 9)),
      duration_ms: duration,
    };
    if (timedOut) result.timed_out = true;
    if (stdout.truncated) result.stdout_truncated = true;
    if (stderr.truncated) result.stderr_truncated = true;
    return result;
  } catch (err) {
    running.killGroup();
    throw new BadRequestError(`could not start ${file}: ${(err as Error).message}`, 'spawn_failed');
  } finally {
    clearTimeout(timer);
    unregister();
  }
}

function streamEnded(s: NodeJS.ReadableStream): Promise<void> {
  return new Promise<void>((resolve) => {
    if ((s as unknown as { readableEnded: boolean }).readableEnded) resolve();
    else {
      s.once('end', resolve);
      s.once('close', resolve);
    }
  });
}

/** Resolves when both pipes end, or after a grace period when a background job keeps them open. */
async function waitForPipes(running: Running): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([running.pipesEnded, new Promise<void>((r) => (timer = setTimeout(r, PIPE_GRACE_MS)))]);
  clearTimeout(timer);
  running.dropPipes();
}
