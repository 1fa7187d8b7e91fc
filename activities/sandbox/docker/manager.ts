/**
 * Docker backend: one container per session, named from the session hash.
 * Docker itself is the arbiter between manager processes: a create that loses
 * the race gets 409 and adopts the winner's container. A container that is not
 * running (idle shutdown, crash, `docker kill`) is removed by id and replaced,
 * on the same named workspace volume.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import Docker from 'dockerode';
import type { ContainerInspectInfo } from 'dockerode';
import { BaseSandboxManager, type SandboxLogger } from '../base-sandbox-manager.js';
import { SandboxStartError } from '../errors.js';
import type { SandboxConfig } from '../sandbox-config.js';
import {
  LABEL,
  sessionLabels,
  type SandboxHandle,
  type SandboxInfo,
  type SandboxSession,
  type SandboxSpec,
  type WorkspaceCopy,
} from '../sandbox-manager.js';
import {
  containerCreateOptions,
  containerMounts,
  dockerNetworkMode,
  SKILLS_TARGET,
  type ContainerPlan,
  type DaemonListen,
  type DockerNetworkMode,
} from './container-plan.js';
import { forceRemoveContainer, inspectContainer, sleep, statusCode } from './engine.js';
import { pickPort, prepareSessionDir } from './host-resources.js';
import { listDockerSandboxes } from './list-sandboxes.js';
import { DockerSandboxPool } from './pool.js';
import { startAndWait, waitReady, type ReadinessContext } from './readiness.js';
import { copyDockerWorkspace } from './workspace-copy.js';

const MAX_ROUNDS = 8;

export interface DockerSandboxOptions {
  docker?: Docker;
  /** Added to every container and volume (tests mark theirs with agent-server.test=1). */
  extraLabels?: Record<string, string>;
}

/** Adds what a round saw, counting repeats of the last entry instead of listing them. */
function note(seen: Array<{ what: string; times: number }>, what: string): void {
  const last = seen.at(-1);
  if (last?.what === what) last.times++;
  else seen.push({ what, times: 1 });
}

/** "a; b ×3; c" */
const describeSeen = (seen: Array<{ what: string; times: number }>) =>
  seen.map((s) => (s.times > 1 ? `${s.what} ×${s.times}` : s.what)).join('; ');

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

  private inspect(name: string): Promise<ContainerInspectInfo | undefined> {
    return inspectContainer(this.docker, name);
  }

  /** What starting a container and waiting for its daemon needs (readiness.ts). */
  private get readiness(): ReadinessContext {
    return {
      docker: this.docker,
      mode: this.mode,
      readyTimeoutMs: this.config.readyTimeoutMs,
      sessionDir: (name) => this.sessionDir(name),
    };
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
          const handle = await startAndWait(this.readiness, created, name, token, true);
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
        const handle = await waitReady(this.readiness, info.Id, name, token, false);
        if (handle) return handle;
        continue;
      }
      if (state.Status === 'created') {
        // Possibly a peer between create and start: starting twice is harmless (304).
        const handle = await startAndWait(this.readiness, info.Id, name, token, false);
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
    const dir = await prepareSessionDir(this.sessionDir(plan.socketDir), this.config.user);
    const mounts = containerMounts(plan, dir.path);
    const listen: DaemonListen =
      this.mode === 'none'
        ? { mode: 'none', socketMode: dir.socketMode }
        : this.mode === 'host'
          ? { mode: 'host', port: await pickPort(this.docker, this.config.portRange, name, plan.round) }
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

  async removeContainer(idOrName: string): Promise<void> {
    await forceRemoveContainer(this.docker, idOrName);
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

  /** The source's workspace volume into the target's, by a short-lived copying container (workspace-copy.ts). */
  async copyWorkspace(from: SandboxSession, to: SandboxSession): Promise<WorkspaceCopy> {
    return copyDockerWorkspace(
      {
        docker: this.docker,
        config: this.config,
        ownLabels: this.ownLabels,
        volumeName: (name) => this.volumeName(name),
      },
      from,
      to,
    );
  }

  override async close(): Promise<void> {
    await super.close();
    if (this.pool.size > 0) await this.pool.drain();
  }

  async maintain(): Promise<void> {
    await this.pool.maintain();
  }

  async list(): Promise<SandboxInfo[]> {
    return listDockerSandboxes({
      ...this.readiness,
      ownLabels: this.ownLabels,
      volumeName: (name) => this.volumeName(name),
    });
  }
}
