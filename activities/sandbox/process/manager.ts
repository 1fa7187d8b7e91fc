/**
 * Process backend: the bundled daemon as a local child process, its root under
 * $DATA_DIR/sandboxes/<name>/workspace. NO isolation — commands run as this
 * user on this host — so it is used only when SANDBOX_BACKEND=process is
 * chosen explicitly (with a warning at start-up); it is meant for laptops
 * without Docker. Skills are symlinked at <name>/skills/<skill> (or <name>/skills
 * is a symlink to SandboxSpec.skillsDir), beside the workspace, since
 * /sandbox/skills does not exist on a host.
 */
import { spawn } from 'node:child_process';
import { existsSync, openSync, closeSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BaseSandboxManager, type SandboxLogger } from '../base-sandbox-manager.js';
import { daemonHealth } from '../daemon-client.js';
import { SandboxNotReadyError, SandboxStartError } from '../errors.js';
import type { SandboxConfig } from '../sandbox-config.js';
import type {
  SandboxEndpoint,
  SandboxHandle,
  SandboxInfo,
  SandboxSession,
  SandboxSpec,
  WorkspaceCopy,
} from '../sandbox-manager.js';
import { sandboxName } from '../sandbox-manager.js';

export interface ProcessSandboxOptions {
  /** The bundled daemon; default sandbox-daemon/dist/daemon.mjs (npm run sandbox:bundle). */
  daemonEntry?: string;
  nodePath?: string;
}

const DEFAULT_ENTRY = fileURLToPath(new URL('../../../sandbox-daemon/dist/daemon.mjs', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export class ProcessSandboxManager extends BaseSandboxManager {
  readonly backend = 'process' as const;
  private readonly entry: string;
  private readonly nodePath: string;

  constructor(
    config: SandboxConfig,
    logger: SandboxLogger,
    tokenSecret: string,
    options: ProcessSandboxOptions = {},
  ) {
    super(config, logger, tokenSecret);
    this.entry = options.daemonEntry ?? DEFAULT_ENTRY;
    this.nodePath = options.nodePath ?? process.execPath;
  }

  private paths(name: string) {
    const dir = path.join(this.config.hostDir, name);
    return {
      dir,
      workspace: path.join(dir, 'workspace'),
      skills: path.join(dir, 'skills'),
      run: path.join(dir, 'run'),
      socket: path.join(dir, 'run', 'daemon.sock'),
      pid: path.join(dir, 'run', 'daemon.pid'),
      lock: path.join(dir, 'run', 'start.lock'),
      log: path.join(dir, 'daemon.log'),
    };
  }

  private async pidOf(name: string): Promise<number | undefined> {
    const pid = Number(await readFile(this.paths(name).pid, 'utf8').catch(() => ''));
    return pid > 0 && pidAlive(pid) ? pid : undefined;
  }

  protected async ensureSandbox(
    session: SandboxSession,
    spec: SandboxSpec,
    name: string,
    token: string,
  ): Promise<SandboxHandle> {
    const p = this.paths(name);
    const endpoint: SandboxEndpoint = { kind: 'unix', socketPath: p.socket };
    const deadline = Date.now() + this.config.readyTimeoutMs;
    await mkdir(p.run, { recursive: true, mode: 0o700 });
    while (Date.now() < deadline) {
      if (await daemonHealth(endpoint, 1000))
        return { name, id: String((await this.pidOf(name)) ?? 'unknown'), endpoint, token, created: false };
      // The lock file (O_EXCL) decides which process starts the daemon; the others wait for its health.
      let lockFd: number;
      try {
        lockFd = openSync(p.lock, 'wx', 0o600);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const age = Date.now() - (await stat(p.lock).catch(() => ({ mtimeMs: 0 }))).mtimeMs;
        if (age > this.config.readyTimeoutMs) await rm(p.lock, { force: true }); // its holder died
        await sleep(25);
        continue;
      }
      try {
        closeSync(lockFd);
        if (await daemonHealth(endpoint, 1000)) continue;
        const pid = await this.spawnDaemon(session, spec, name, token);
        const handle = await this.waitReady(name, pid, endpoint, token, deadline);
        return handle;
      } finally {
        await rm(p.lock, { force: true });
      }
    }
    throw new SandboxNotReadyError(
      `sandbox ${name} did not become ready within ${this.config.readyTimeoutMs} ms`,
    );
  }

  private async spawnDaemon(
    session: SandboxSession,
    spec: SandboxSpec,
    name: string,
    token: string,
  ): Promise<number> {
    if (!existsSync(this.entry))
      throw new SandboxStartError(
        `sandbox daemon bundle missing at ${this.entry} (run npm run sandbox:bundle)`,
      );
    const p = this.paths(name);
    await mkdir(p.workspace, { recursive: true });
    await rm(p.skills, { recursive: true, force: true }); // a symlink (skillsDir) is removed, not followed
    if (spec.skillsDir !== undefined) {
      if ((spec.skills ?? []).some((s) => s.hostPath))
        throw new SandboxStartError('a sandbox takes skillsDir or per-skill mounts, not both');
      await symlink(path.resolve(spec.skillsDir), p.skills);
    } else {
      await mkdir(p.skills, { recursive: true });
      for (const skill of spec.skills ?? []) {
        if (skill.hostPath && /^[A-Za-z0-9._-]+$/.test(skill.name) && !skill.name.startsWith('.'))
          await symlink(path.resolve(skill.hostPath), path.join(p.skills, skill.name));
      }
    }
    await writeFile(path.join(p.dir, 'session.json'), JSON.stringify(session));
    const log = openSync(p.log, 'a', 0o600);
    const child = spawn(this.nodePath, [this.entry], {
      detached: true, // outlives a manager restart, like a container would
      stdio: ['ignore', log, log],
      env: {
        PATH: process.env.PATH,
        HOME: p.workspace,
        LANG: process.env.LANG ?? 'C.UTF-8',
        SANDBOX_TOKEN: token,
        SANDBOX_SOCKET: p.socket,
        SANDBOX_ROOT: p.workspace,
        SANDBOX_IDLE_TIMEOUT_MS: String(this.config.idleTimeoutMs),
        SANDBOX_MAX_TIMEOUT_MS: String(this.config.maxTimeoutMs),
        SANDBOX_DEFAULT_TIMEOUT_MS: String(this.config.commandTimeoutMs),
        SANDBOX_MAX_OUTPUT_BYTES: String(this.config.maxOutputBytes),
      },
    });
    closeSync(log);
    child.unref();
    if (child.pid === undefined)
      throw new SandboxStartError(`cannot spawn the sandbox daemon with ${this.nodePath}`);
    await writeFile(p.pid, String(child.pid));
    this.logger.info({ sandbox: name, pid: child.pid }, 'sandbox process started');
    return child.pid;
  }

  private async waitReady(
    name: string,
    pid: number,
    endpoint: SandboxEndpoint,
    token: string,
    deadline: number,
  ): Promise<SandboxHandle> {
    while (Date.now() < deadline) {
      if (await daemonHealth(endpoint, 1000))
        return { name, id: String(pid), endpoint, token, created: true };
      if (!pidAlive(pid)) {
        const log = await readFile(this.paths(name).log, 'utf8').catch(() => '');
        throw new SandboxStartError(
          `sandbox ${name} daemon exited during start: ${log.trim().split('\n').slice(-3).join(' | ')}`,
        );
      }
      await sleep(10);
    }
    throw new SandboxNotReadyError(
      `sandbox ${name} did not become ready within ${this.config.readyTimeoutMs} ms`,
    );
  }

  protected async releaseSandbox(_session: SandboxSession, name: string): Promise<void> {
    const pid = await this.pidOf(name);
    if (pid !== undefined) {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      // Never signal a recycled pid that is no longer our daemon.
      if (cmdline === '' || cmdline.includes(this.entry)) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
        for (let i = 0; i < 50 && pidAlive(pid); i++) await sleep(20);
      }
    }
    await rm(this.paths(name).socket, { force: true });
    await rm(this.paths(name).pid, { force: true });
  }

  /** The source's workspace folder into the target's; session.json too, so list() (the reaper) knows the target. */
  async copyWorkspace(from: SandboxSession, to: SandboxSession): Promise<WorkspaceCopy> {
    const source = this.paths(sandboxName(from)).workspace;
    if (!existsSync(source)) return 'absent';
    const target = this.paths(sandboxName(to));
    await mkdir(target.workspace, { recursive: true });
    await writeFile(path.join(target.dir, 'session.json'), JSON.stringify(to));
    // Symlinks are copied as links, as cp -a does in a container.
    await cp(source, target.workspace, {
      recursive: true,
      force: true,
      preserveTimestamps: true,
      verbatimSymlinks: true,
    });
    return 'copied';
  }

  protected async destroySandbox(session: SandboxSession, name: string): Promise<void> {
    await this.releaseSandbox(session, name);
    await rm(this.paths(name).dir, { recursive: true, force: true });
  }

  async list(): Promise<SandboxInfo[]> {
    const names = await readdir(this.config.hostDir).catch(() => [] as string[]);
    const out: SandboxInfo[] = [];
    for (const name of names) {
      const p = this.paths(name);
      const session = await readFile(path.join(p.dir, 'session.json'), 'utf8').then(
        (t) => JSON.parse(t) as SandboxSession,
        () => undefined,
      );
      if (!session) continue;
      const health = await daemonHealth({ kind: 'unix', socketPath: p.socket }, 1000);
      const pid = await this.pidOf(name);
      const finishedAt = health
        ? undefined
        : await stat(p.log).then(
            (s) => s.mtime,
            () => undefined,
          );
      out.push({
        name,
        session,
        id: pid === undefined ? undefined : String(pid),
        state: health ? 'running' : 'stopped',
        image: undefined,
        finishedAt,
        idleMs: health?.idle_ms,
      });
    }
    return out;
  }
}
