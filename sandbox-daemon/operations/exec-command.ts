/**
 * Runs one command (bash -c, or a python script on stdin) and collects §2.10.
 * Each command gets its own process group so a timeout can kill the whole
 * tree it spawned, not just the shell.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import type { CommandResult, ExecOptions } from '../contracts.js';
import { BadRequestError } from '../errors.js';
import { resolveInRoot } from './resolve-path.js';

export interface ExecContext {
  root: string;
  maxOutputBytes: number;
  /** Environment every command starts from; the daemon's own secrets are already removed. */
  baseEnv: Record<string, string>;
}

/** §1 promises full bash; fall back to sh only for custom images without it. */
export const SHELL = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
const PYTHON = ['/usr/bin/python3', '/usr/local/bin/python3'].find((p) => existsSync(p)) ?? 'python3';

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
  const child = spawn(file, args, {
    cwd,
    env: { ...ctx.baseEnv, ...options.env },
    detached: true, // new process group, killable as a whole
    stdio: [kind === 'python' ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  const stdout = new OutputBuffer(ctx.maxOutputBytes);
  const stderr = new OutputBuffer(ctx.maxOutputBytes);
  const outPipe = child.stdout!; // stdio is 'pipe' for both
  const errPipe = child.stderr!;
  outPipe.on('data', (c: Buffer) => stdout.push(c));
  errPipe.on('data', (c: Buffer) => stderr.push(c));
  if (kind === 'python' && child.stdin) {
    child.stdin.on('error', () => {}); // script exited before reading it all
    child.stdin.end(source);
  }
  const unregister = onSpawn?.(() => killGroup(child.pid)) ?? (() => {});

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid);
  }, options.timeoutMs);

  try {
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
      (resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (code, signal) => resolve({ code, signal }));
      },
    );
    await waitForPipes(outPipe, errPipe);
    const duration = Math.round(performance.now() - started);
    const signalNo = exit.signal ? (osConstants.signals[exit.signal] ?? 9) : 0;
    const result: CommandResult = {
      stdout: stdout.text(),
      stderr: stderr.text(),
      exit_code: timedOut ? 124 : (exit.code ?? 128 + signalNo),
      duration_ms: duration,
    };
    if (timedOut) result.timed_out = true;
    if (stdout.truncated) result.stdout_truncated = true;
    if (stderr.truncated) result.stderr_truncated = true;
    return result;
  } catch (err) {
    throw new BadRequestError(`could not start ${file}: ${(err as Error).message}`, 'spawn_failed');
  } finally {
    clearTimeout(timer);
    unregister();
  }
}

/** Resolves when both pipes end, or after a grace period when a background job keeps them open. */
async function waitForPipes(...streams: NodeJS.ReadableStream[]): Promise<void> {
  const ended = streams.map(
    (s) =>
      new Promise<void>((resolve) => {
        if ((s as unknown as { readableEnded: boolean }).readableEnded) resolve();
        else {
          s.once('end', resolve);
          s.once('close', resolve);
        }
      }),
  );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(ended), new Promise<void>((r) => (timer = setTimeout(r, PIPE_GRACE_MS)))]);
  clearTimeout(timer);
  for (const s of streams) (s as unknown as { destroy(): void }).destroy();
}
