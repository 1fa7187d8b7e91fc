/**
 * Docker backend: one container per session, named from the session hash.
 * Docker itself is the arbiter between manager processes: a create that loses
 * the race gets 409 and adopts the winner's container. A container that is not
 * running (idle shutdown, crash, `docker kill`) is removed by id and replaced,
 * on the same named workspace volume.
 */
import { chmod, chown, mkdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import Docker from 'dockerode';
import type { ContainerInspectInfo } from 'dockerode';
import { BaseSandboxManager, type SandboxLogger } from '../base-sandbox-manager.js';
import { daemonHealth } from '../daemon-client.js';
import { SandboxNotReadyError, SandboxStartError } from '../errors.js';
import type { SandboxConfig } from '../sandbox-config.js';
import {
  LABEL,
  sessionFromLabels,
  sessionLabels,
  type SandboxEndpoint,
  type SandboxHandle,
  type SandboxInfo,
  type SandboxSession,
  type SandboxSpec,
} from '../sandbox-manager.js';
import {
  containerCreateOptions,
  containerMounts,
  DAEMON_PORT,
  dockerNetworkMode,
  SKILLS_TARGET,
  SOCKET_DIR,
  type ContainerPlan,
  type DaemonListen,
  type DockerNetworkMode,
} from './container-plan.js';
import { DockerSandboxPool } from './pool.js';

const MAX_ROUNDS = 8;

export interface DockerSandboxOptions {
  docker?: Docker;
  /** Added to every container and volume (tests mark theirs with agent-server.test=1). */
  extraLabels?: Record<string, string>;
}

function statusCode(err: unknown): number | undefined {
  return (err as { statusCode?: number }).statusCode;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Adds what a round saw, counting repeats of the last entry instead of listing them. */
function note(seen: Array<{ what: string; times: number }>, what: string): void {
  const last = seen.at(-1);
  if (last?.what === what) last.times++;
  else seen.push({ what, times: 1 });
}

/** "a; b ×3; c" */
const describeSeen = (seen: Array<{ what: string; times: number }>) =>
  seen.map((s) => (s.times > 1 ? `${s.what} ×${s.times}` : s.what)).join('; ');

/** Docker's log stream without a TTY is multiplexed: 8-byte frame headers before each chunk. */
function demuxLogs(buf: Buffer): string {
  const out: Buffer[] = [];
  let i = 0;
  while (i + 8 <= buf.length) {
    const size = buf.readUInt32BE(i + 4);
    out.push(buf.subarray(i + 8, i + 8 + size));
    i += 8 + size;
  }
  return Buffer.concat(out).toString('utf8');
}

export class DockerSandboxManager extends BaseSandboxManager {
  readonly backend = 'docker' as const;
  readonly docker: Docker;
  private readonly extraLabels: Record<string, string>;
  readonly mode: DockerNetworkMode;
  readonly pool: DockerSandboxPool;

  constructor(
    config: SandboxConfig,
    logger: SandboxLogger,
    tokenSecret: string,
    options: DockerSandboxOptions = {},
  ) {
    super(config, logger, tokenSecret);
    this.docker = options.docker ?? new Docker();
    this.extraLabels = options.extraLabels ?? {};
    this.mode = dockerNetworkMode(config.dockerNetwork);
    this.pool = new DockerSandboxPool({
      docker: this.docker,
      config,
      logger,
      ownLabels: this.ownLabels,
      mode: this.mode,
      tokenFor: (name) => this.tokenFor(name),
      createFromPlan: (plan) => this.createFromPlan(plan),
      removeContainer: (id) => this.removeContainer(id),
    });
  }

  /** Fills the pool in the background (SANDBOX_POOL_SIZE; nothing when 0). */
  startPool(): void {
    void this.pool.fill();
  }

  poolStats(): { waiting: number | undefined; limit: number } {
    return { waiting: this.pool.lastWaiting, limit: this.pool.size };
  }

  private sessionDir(name: string): string {
    return path.join(this.config.hostDir, name);
  }

  private volumeName(name: string): string {
    return `${name}-workspace`;
  }

  private async inspect(name: string): Promise<ContainerInspectInfo | undefined> {
    try {
      return await this.docker.getContainer(name).inspect();
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  }

  protected async ensureSandbox(
    session: SandboxSession,
    spec: SandboxSpec,
    name: string,
    token: string,
  ): Promise<SandboxHandle> {
    let triedPool = !this.pool.fits(spec);
    // What each round found, for the error when no round settles it.
    const seen: Array<{ what: string; times: number }> = [];
    const deadline = Date.now() + this.config.readyTimeoutMs;
    let reservedWaits = 0;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const info = await this.inspect(name);
      if (!info && !triedPool) {
        // A new session takes a waiting pool sandbox when there is one; then re-inspect whatever happened.
        triedPool = true;
        const claimed = await this.pool.claim(session, name, token);
        if (claimed) return claimed;
        note(seen, 'absent, no pool sandbox taken');
        continue;
      }
      if (!info) {
        const created = await this.createContainer(session, spec, name, token, round);
        if (!created) {
          // Another process won the name: adopt its container next round. Docker
          // reserves the name before the container exists, so for as long as that
          // create takes (35 ms idle; under load, long enough to use up every
          // round) the name answers 404 to inspect and 409 to create. Wait for it
          // rather than spinning through the rounds; such waits count only past
          // the deadline.
          note(seen, 'absent, name reserved by a create in progress');
          if (Date.now() < deadline) {
            round--;
            await sleep(Math.min(500, 10 * 2 ** reservedWaits++) * (0.5 + Math.random()));
          }
          continue;
        }
        try {
          const handle = await this.startAndWait(created, name, token, true);
          if (handle) return handle;
          note(seen, 'created, gone before ready');
        } catch (err) {
          // Host networking: another process may have bound our port first; next round picks another.
          if (!(this.mode === 'host' && err instanceof SandboxStartError)) throw err;
          this.logger.warn(
            { sandbox: name, err: err.message },
            'sandbox daemon failed to start on host network; retrying on another port',
          );
          await this.removeContainer(created);
          note(seen, 'created, daemon failed to start on host network');
        }
        continue;
      }
      const state = info.State;
      note(
        seen,
        `${info.Id.slice(0, 12)} ${state.Status}${state.Running ? '' : ` (exit ${state.ExitCode})`}`,
      );
      if (spec.skillsDir && !info.Mounts?.some((m) => m.Destination === SKILLS_TARGET)) {
        // Started before the agent had skills (or from the pool): a mount cannot be added to a
        // container, so replace it; the workspace volume stays.
        this.logger.info(
          { sandbox: name, container: info.Id.slice(0, 12) },
          'replacing sandbox to mount the agent skills',
        );
        await this.removeContainer(info.Id);
        continue;
      }
      if (state.Running && !state.Paused && !state.Restarting) {
        const handle = await this.waitReady(info.Id, name, token, false);
        if (handle) return handle;
        continue;
      }
      if (state.Status === 'created') {
        // Possibly a peer between create and start: starting twice is harmless (304).
        const handle = await this.startAndWait(info.Id, name, token, false);
        if (handle) return handle;
        continue;
      }
      if (state.Status === 'removing') {
        await sleep(50);
        continue;
      }
      // exited, dead, paused: the third life-cycle rule (docs/interface.md#sandbox-life-cycle) — remove it (by id, so a peer's fresh container is never hit) and create anew.
      this.logger.info(
        { sandbox: name, container: info.Id.slice(0, 12), status: state.Status, exitCode: state.ExitCode },
        'replacing stopped sandbox',
      );
      await this.removeContainer(info.Id);
    }
    throw new SandboxStartError(
      `sandbox ${name} could not be settled after ${MAX_ROUNDS} attempts; seen: ${describeSeen(seen)}`,
    );
  }

  /** Returns the new container id, or undefined when the name is taken (409). */
  private async createContainer(
    session: SandboxSession,
    spec: SandboxSpec,
    name: string,
    token: string,
    round: number,
  ): Promise<string | undefined> {
    const labels = { ...sessionLabels(session), ...this.ownLabels };
    const volume = this.volumeName(name);
    // Creating an existing volume returns it unchanged (a pool-born session's workspace alias included).
    await this.docker.createVolume({ Name: volume, Labels: labels });
    return this.createFromPlan({
      name,
      labels,
      token,
      volume,
      socketDir: name,
      image: spec.image ?? this.config.defaultImage,
      limits: { ...this.config.limits, ...spec.limits },
      skills: spec.skills ?? [],
      ...(spec.skillsDir !== undefined ? { skillsDir: spec.skillsDir } : {}),
      idleTimeoutMs: this.config.idleTimeoutMs,
      pool: false,
      round,
    });
  }

  /** Labels on everything this manager creates: the installation, plus the caller's extras. */
  get ownLabels(): Record<string, string> {
    return { [LABEL.installation]: this.config.installation, ...this.extraLabels };
  }

  /** Creates (does not start) a sandbox container; undefined when the name is taken (409). */
  async createFromPlan(plan: ContainerPlan): Promise<string | undefined> {
    const { name, image } = plan;
    const dir = await this.prepareSessionDir(plan.socketDir);
    const mounts = containerMounts(plan, dir.path);
    const listen: DaemonListen =
      this.mode === 'none'
        ? { mode: 'none', socketMode: dir.socketMode }
        : this.mode === 'host'
          ? { mode: 'host', port: await this.pickPort(name, plan.round) }
          : { mode: 'network' };
    const options = containerCreateOptions(plan, this.config, mounts, listen);
    try {
      const container = await this.docker.createContainer(options);
      this.logger.info(
        { sandbox: name, container: container.id.slice(0, 12), image, ...(plan.pool ? { pool: true } : {}) },
        'sandbox container created',
      );
      return container.id;
    } catch (err) {
      if (statusCode(err) === 409) return undefined;
      if (statusCode(err) === 404)
        throw new SandboxStartError(
          `sandbox image "${image}" not found (build it with npm run sandbox:image)`,
          { cause: err },
        );
      throw new SandboxStartError(`cannot create sandbox ${name}: ${(err as Error).message}`, { cause: err });
    }
  }

  /**
   * The per-session folder bind-mounted at /sandbox/run for the daemon's socket.
   * As root we hand it to the sandbox user (0700); otherwise we cannot chown,
   * so it is world-writable and the socket 0666 — the bearer token still guards it.
   */
  private async prepareSessionDir(name: string): Promise<{ path: string; socketMode: string }> {
    const dir = this.sessionDir(name);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const [uid, gid] = this.config.user.split(':').map(Number) as [number, number];
    if (process.getuid?.() === 0) {
      await chown(dir, uid, gid);
      await chmod(dir, 0o700);
      return { path: dir, socketMode: '600' };
    }
    await chmod(dir, 0o777);
    return { path: dir, socketMode: '666' };
  }

  /** Host networking: a free loopback port, starting from one derived from the name so peers rarely collide. */
  private async pickPort(name: string, round: number): Promise<number> {
    const { from, to } = this.config.portRange;
    const size = to - from + 1;
    const taken = new Set(
      (await this.docker.listContainers({ all: true, filters: JSON.stringify({ label: [LABEL.port] }) })).map(
        (c) => Number(c.Labels[LABEL.port]),
      ),
    );
    const start = (parseInt(name.slice(-8), 16) + round * 7919) % size;
    for (let i = 0; i < size; i++) {
      const port = from + ((start + i) % size);
      if (!taken.has(port) && (await portFree(port))) return port;
    }
    throw new SandboxStartError(`no free port in SANDBOX_PORT_RANGE ${from}-${to}`);
  }

  private async startAndWait(
    id: string,
    name: string,
    token: string,
    created: boolean,
  ): Promise<SandboxHandle | undefined> {
    try {
      await this.docker.getContainer(id).start();
    } catch (err) {
      const code = statusCode(err);
      if (code === 404) return undefined; // removed by a peer meanwhile
      if (code !== 304)
        throw new SandboxStartError(`cannot start sandbox ${name}: ${(err as Error).message}`, {
          cause: err,
        });
    }
    return this.waitReady(id, name, token, created);
  }

  private endpointOf(info: ContainerInspectInfo, name: string): SandboxEndpoint | undefined {
    if (this.mode === 'none') {
      // A container claimed from the pool keeps the socket folder it was created with.
      const dir = info.Mounts.find((m) => m.Destination === SOCKET_DIR)?.Source ?? this.sessionDir(name);
      return { kind: 'unix', socketPath: path.join(dir, 'daemon.sock') };
    }
    if (this.mode === 'host')
      return { kind: 'http', url: `http://127.0.0.1:${info.Config.Labels[LABEL.port]}` };
    const binding = info.NetworkSettings.Ports[`${DAEMON_PORT}/tcp`]?.[0];
    return binding ? { kind: 'http', url: `http://127.0.0.1:${binding.HostPort}` } : undefined;
  }

  /**
   * Polls the daemon's /health until it answers. Returns undefined when the
   * container vanished (a peer replaced it) so the caller re-inspects; throws
   * when it exited on its own (a daemon that cannot start) or on timeout.
   */
  private async waitReady(
    id: string,
    name: string,
    token: string,
    created: boolean,
  ): Promise<SandboxHandle | undefined> {
    const deadline = Date.now() + this.config.readyTimeoutMs;
    let endpoint: SandboxEndpoint | undefined;
    for (let poll = 0; ; poll++) {
      if (endpoint === undefined || poll % 10 === 0) {
        let info: ContainerInspectInfo;
        try {
          info = await this.docker.getContainer(id).inspect();
        } catch (err) {
          if (statusCode(err) === 404) return undefined;
          throw err;
        }
        if (!info.State.Running) {
          // Exited right after we saw it running: an idle shutdown racing us is normal; a fresh one failing is not.
          if (!created) return undefined;
          const logs = await this.tailLogs(id);
          throw new SandboxStartError(
            `sandbox ${name} exited during start (code ${info.State.ExitCode}): ${logs}`,
          );
        }
        endpoint = this.endpointOf(info, name);
      }
      if (endpoint && (await daemonHealth(endpoint, 1000))) return { name, id, endpoint, token, created };
      if (Date.now() > deadline)
        throw new SandboxNotReadyError(
          `sandbox ${name} did not become ready within ${this.config.readyTimeoutMs} ms`,
        );
      await sleep(poll < 40 ? 10 : 100);
    }
  }

  private async tailLogs(id: string): Promise<string> {
    try {
      const buf = await this.docker
        .getContainer(id)
        .logs({ stdout: true, stderr: true, tail: 20, follow: false });
      return demuxLogs(buf).trim().split('\n').slice(-5).join(' | ').slice(0, 1000) || '(no output)';
    } catch {
      return '(logs unavailable)';
    }
  }

  async removeContainer(idOrName: string): Promise<void> {
    try {
      await this.docker.getContainer(idOrName).remove({ force: true });
    } catch (err) {
      const code = statusCode(err);
      // 404: already gone; 409: a removal is already in progress.
      if (code !== 404 && code !== 409) throw err;
    }
  }

  protected async releaseSandbox(_session: SandboxSession, name: string): Promise<void> {
    await this.removeContainer(name);
  }

  protected async destroySandbox(_session: SandboxSession, name: string): Promise<void> {
    await this.removeContainer(name);
    let poolId: string | undefined;
    try {
      poolId = (await this.docker.getVolume(this.volumeName(name)).inspect()).Labels?.[LABEL.pool];
    } catch (err) {
      if (statusCode(err) !== 404) throw err;
    }
    for (let i = 0; i < 20; i++) {
      try {
        await this.docker.getVolume(this.volumeName(name)).remove();
        break;
      } catch (err) {
        if (statusCode(err) === 404) break;
        if (statusCode(err) !== 409) throw err;
        await sleep(100); // the container's removal has not released the volume yet
      }
    }
    await rm(this.sessionDir(name), { recursive: true, force: true });
    // A pool-born workspace: the alias is gone, now the pool volume holding the files.
    if (poolId) await this.pool.removePoolVolume(poolId, true);
  }

  override async close(): Promise<void> {
    await super.close();
    if (this.pool.size > 0) await this.pool.drain();
  }

  async maintain(): Promise<void> {
    await this.pool.maintain();
  }

  async list(): Promise<SandboxInfo[]> {
    const filter = JSON.stringify({
      label: [`${LABEL.sandbox}=1`, ...Object.entries(this.ownLabels).map(([k, v]) => `${k}=${v}`)],
    });
    const [containers, volumes] = await Promise.all([
      this.docker.listContainers({ all: true, filters: filter }),
      this.docker.listVolumes({ filters: filter }),
    ]);
    const volumeLabels = new Map((volumes.Volumes ?? []).map((v) => [v.Name, v.Labels]));
    const byName = new Map<string, SandboxInfo>();
    for (const c of containers) {
      const name = c.Names[0]?.replace(/^\//, '');
      // A container claimed from the pool carries its session on its workspace alias (labels cannot change).
      const session =
        sessionFromLabels(c.Labels) ??
        (name ? sessionFromLabels(volumeLabels.get(this.volumeName(name))) : undefined);
      if (!session || !name) continue;
      const running = c.State === 'running';
      let finishedAt: Date | undefined;
      let idleMs: number | undefined;
      if (running) {
        const info = await this.inspect(name);
        const endpoint = info && this.endpointOf(info, name);
        idleMs = endpoint ? (await daemonHealth(endpoint, 1000))?.idle_ms : undefined;
      } else {
        const info = await this.inspect(name);
        finishedAt = info?.State.FinishedAt ? new Date(info.State.FinishedAt) : undefined;
      }
      byName.set(name, {
        name,
        session,
        id: c.Id,
        state: running ? 'running' : 'stopped',
        image: c.Image,
        finishedAt,
        idleMs,
      });
    }
    for (const v of volumes.Volumes ?? []) {
      const session = sessionFromLabels(v.Labels);
      const name = v.Name.replace(/-workspace$/, '');
      if (!session || byName.has(name)) continue;
      byName.set(name, {
        name,
        session,
        id: undefined,
        state: 'absent',
        image: undefined,
        finishedAt: undefined,
        idleMs: undefined,
      });
    }
    return [...byName.values()];
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
