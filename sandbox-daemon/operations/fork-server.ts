/**
 * A long-lived helper that starts commands for the daemon. Starting a process
 * from Node costs 5–8 ms on small VMs: libuv fork()s, copying the page tables
 * of the whole Node process, and on these VMs fork() itself is the expensive
 * part (~5 ms even from a 10 MB Python). The helper uses posix_spawn, which
 * glibc implements with vfork semantics (no copy), so `bash -c true` starts
 * in ~3 ms instead of ~8 ms. The
 * helper runs as the daemon's user with an empty environment; each command
 * still gets its own session and process group (setsid), its working folder,
 * exactly the environment the daemon computed, default signal dispositions,
 * /dev/null or a pipe on stdin, and pipes on stdout/stderr, as with spawn().
 * Output is capped in the helper too, so a runaway command is drained there
 * instead of being copied into the daemon.
 *
 * Used only when python3 exists in the image; otherwise, before it is ready,
 * or after it died, exec-command falls back to spawn().
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { FORK_SERVER_SOURCE } from './fork-server-source.js';

const Frame = {
  Ready: 0,
  Pid: 1,
  Stdout: 2,
  Stderr: 3,
  StdoutEnd: 4,
  StderrEnd: 5,
  Exit: 6,
  Fail: 7,
} as const;

export interface LaunchRequest {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** Bytes per stream the caller keeps; the helper forwards one more so truncation is visible. */
  cap: number;
  /** Written to the command's stdin, then closed; stdin is /dev/null when absent. */
  input?: string;
}

export interface JobEvents {
  onPid(pid: number): void;
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
  onStdoutEnd(): void;
  onStderrEnd(): void;
  onExit(code: number | null, signal: number): void;
  /** The command could not be started, or the helper died under it. */
  onFail(message: string): void;
}

export class ForkServer {
  private child: ChildProcess | undefined;
  private ready = false;
  private dead = false;
  private nextId = 1;
  private readonly jobs = new Map<number, JobEvents>();
  private buffer: Buffer = Buffer.alloc(0);

  constructor(
    private readonly python: string,
    private readonly onDeath: (reason: string) => void = () => {},
  ) {}

  /** Starts the helper in the background; `available` turns true once it reports ready. */
  start(): void {
    if (this.child) return;
    const child = spawn(this.python, ['-I', '-S', '-c', FORK_SERVER_SOURCE], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' },
    });
    this.child = child;
    child.stdin.on('error', () => {}); // reported through 'exit'
    child.stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    child.once('error', (err) => this.die(`fork server could not start: ${err.message}`));
    child.once('exit', (code, signal) => this.die(`fork server exited (${signal ?? code})`));
  }

  get available(): boolean {
    return this.ready && !this.dead;
  }

  /** Returns the job id, used by drop(). */
  launch(request: LaunchRequest, events: JobEvents): number {
    const id = this.nextId++;
    this.jobs.set(id, events);
    this.write({ id, ...request, input: request.input ?? null });
    return id;
  }

  /** Closes the job's pipes in the helper: a background job that keeps them open no longer matters. */
  drop(id: number): void {
    if (!this.jobs.delete(id) || this.dead) return;
    this.write({ id, drop: true });
  }

  stop(): void {
    this.dead = true;
    this.child?.kill('SIGKILL');
  }

  private write(message: object): void {
    const json = Buffer.from(JSON.stringify(message), 'utf8');
    const head = Buffer.alloc(4);
    head.writeUInt32BE(json.length);
    this.child!.stdin!.write(Buffer.concat([head, json]));
  }

  private die(reason: string): void {
    const wasDead = this.dead;
    this.dead = true;
    this.ready = false;
    for (const events of this.jobs.values()) events.onFail(reason);
    this.jobs.clear();
    if (!wasDead) this.onDeath(reason);
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    let at = 0;
    while (this.buffer.length - at >= 9) {
      const kind = this.buffer.readUInt8(at);
      const id = this.buffer.readUInt32BE(at + 1);
      const size = this.buffer.readUInt32BE(at + 5);
      if (this.buffer.length - at < 9 + size) break;
      const payload = this.buffer.subarray(at + 9, at + 9 + size);
      at += 9 + size;
      this.dispatch(kind, id, payload);
    }
    this.buffer = at === this.buffer.length ? Buffer.alloc(0) : Buffer.from(this.buffer.subarray(at));
  }

  private dispatch(kind: number, id: number, payload: Buffer): void {
    if (kind === Frame.Ready) {
      this.ready = true;
      return;
    }
    const events = this.jobs.get(id);
    if (!events) return; // dropped
    switch (kind) {
      case Frame.Pid:
        events.onPid(payload.readUInt32BE(0));
        break;
      case Frame.Stdout:
        events.onStdout(payload);
        break;
      case Frame.Stderr:
        events.onStderr(payload);
        break;
      case Frame.StdoutEnd:
        events.onStdoutEnd();
        break;
      case Frame.StderrEnd:
        events.onStderrEnd();
        break;
      case Frame.Exit: {
        const code = payload.readInt32BE(0);
        events.onExit(code < 0 ? null : code, payload.readInt32BE(4));
        break;
      }
      case Frame.Fail:
        this.jobs.delete(id);
        events.onFail(payload.toString('utf8'));
        break;
    }
  }
}
