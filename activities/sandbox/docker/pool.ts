/**
 * A small pool of pre-started Docker sandboxes, so a new session's first
 * command does not wait for a container start (~0.5 s on a small VM).
 *
 * Slots are named `agent-sandbox-pool-<installation hash>-<i>`, so replicas
 * sharing one engine share one pool of at most SANDBOX_POOL_SIZE waiting
 * sandboxes: Docker's 409 on a taken name arbitrates who refills a slot. Each
 * incarnation has a random pool id: its own volume (`agent-sandbox-pool-<id>`),
 * its own socket folder and a token derived from that id, so nothing learned in
 * one sandbox opens another.
 *
 * Claiming, for a session that has no workspace yet (a session with one must
 * get that volume back, which only a new container can mount):
 *   1. POST /claim to a waiting pool daemon with the session's token. The
 *      daemon accepts exactly one claim: this is the lock between processes.
 *   2. Create the session's workspace volume `<name>-workspace` as a bind alias
 *      of the pool volume (labelled with the session and the pool id), so the
 *      session's later containers mount the same files. If that volume already
 *      exists and is not ours, the session has a workspace: give the pool
 *      sandbox up and use the normal path.
 *   3. Rename the container to the session's name. A 409 means a peer made the
 *      session's container first (on our alias): remove ours and adopt theirs.
 * A claimed container keeps its pool labels (labels are immutable); list()
 * finds its session through the alias volume.
 */
import { randomBytes, createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type Docker from 'dockerode';
import type { ContainerInfo } from 'dockerode';
import type { SandboxLogger } from '../base-sandbox-manager.js';
import { daemonRequest } from '../daemon-client.js';
import type { SandboxConfig } from '../sandbox-config.js';
import {
  LABEL,
  sessionLabels,
  type SandboxEndpoint,
  type SandboxHandle,
  type SandboxSession,
  type SandboxSpec,
} from '../sandbox-manager.js';
import { DAEMON_PORT, type ContainerPlan, type DockerNetworkMode } from './container-plan.js';
import { statusCode } from './engine.js';

/** What the pool needs from the Docker manager. */
export interface PoolHost {
  docker: Docker;
  config: SandboxConfig;
  logger: SandboxLogger;
  ownLabels: Record<string, string>;
  mode: DockerNetworkMode;
  tokenFor(name: string): string;
  createFromPlan(plan: ContainerPlan): Promise<string | undefined>;
  removeContainer(idOrName: string): Promise<void>;
}

/** A created-but-not-started slot younger than this belongs to a peer that is about to start it. */
const CREATED_GRACE_MS = 60_000;
/** A pool volume with no container and no alias, older than this, is left over from a crash. */
const ORPHAN_VOLUME_MS = 10 * 60_000;

export function poolVolumeName(poolId: string): string {
  return `agent-sandbox-pool-${poolId}`;
}

export class DockerSandboxPool {
  private readonly slotPrefix: string;
  private filling: Promise<void> | undefined;
  private closed = false;
  /** Running slots at the last listing (claims, fills and reaper passes list them): the pool-size gauge. */
  lastWaiting: number | undefined;

  constructor(private readonly host: PoolHost) {
    const hash = createHash('sha256').update(host.config.installation).digest('hex').slice(0, 10);
    this.slotPrefix = `agent-sandbox-pool-${hash}-`;
  }

  get size(): number {
    return this.host.config.poolSize;
  }

  /** Pool sandboxes run the default image with the default limits and no skills. */
  fits(spec: SandboxSpec): boolean {
    const { config } = this.host;
    if (this.size === 0 || this.closed) return false;
    if (spec.image !== undefined && spec.image !== config.defaultImage) return false;
    if ((spec.skills ?? []).some((s) => s.hostPath) || spec.skillsDir !== undefined) return false;
    const limits = { ...config.limits, ...spec.limits };
    return (
      limits.memoryMb === config.limits.memoryMb &&
      limits.cpus === config.limits.cpus &&
      limits.pids === config.limits.pids
    );
  }

  private socketDir(poolId: string): string {
    return poolVolumeName(poolId);
  }

  private poolToken(poolId: string): string {
    return this.host.tokenFor(poolVolumeName(poolId));
  }

  private isSlot(name: string | undefined): boolean {
    return (
      name !== undefined &&
      name.startsWith(this.slotPrefix) &&
      /^\d+$/.test(name.slice(this.slotPrefix.length))
    );
  }

  private async listSlots(): Promise<ContainerInfo[]> {
    const filters = JSON.stringify({
      label: [`${LABEL.installation}=${this.host.config.installation}`, LABEL.pool],
      name: [this.slotPrefix],
    });
    const all = await this.host.docker.listContainers({ all: true, filters });
    const slots = all.filter((c) => this.isSlot(c.Names[0]?.replace(/^\//, '')));
    this.lastWaiting = slots.filter((c) => c.State === 'running').length;
    return slots;
  }

  private endpointOf(c: ContainerInfo): SandboxEndpoint | undefined {
    const poolId = c.Labels[LABEL.pool];
    if (this.host.mode === 'none')
      return poolId
        ? {
            kind: 'unix',
            socketPath: path.join(this.host.config.hostDir, this.socketDir(poolId), 'daemon.sock'),
          }
        : undefined;
    if (this.host.mode === 'host') return { kind: 'http', url: `http://127.0.0.1:${c.Labels[LABEL.port]}` };
    const port = c.Ports.find((p) => p.PrivatePort === DAEMON_PORT && p.PublicPort)?.PublicPort;
    return port ? { kind: 'http', url: `http://127.0.0.1:${port}` } : undefined;
  }

  /** POST /claim: true when this caller, and no one else, now owns the pool sandbox. */
  private async claimDaemon(c: ContainerInfo, token: string, idleTimeoutMs: number): Promise<boolean> {
    const endpoint = this.endpointOf(c);
    const poolId = c.Labels[LABEL.pool];
    if (!endpoint || !poolId) return false;
    try {
      const res = await daemonRequest(endpoint, {
        method: 'POST',
        path: '/claim',
        token: this.poolToken(poolId),
        body: JSON.stringify({ token, idle_timeout_ms: idleTimeoutMs }),
        contentType: 'application/json',
        timeoutMs: 2_000,
      });
      return res.status === 200;
    } catch {
      return false; // not listening yet, or gone
    }
  }

  /**
   * Gives the session a waiting pool sandbox, or undefined when there is none
   * to give (empty pool, a workspace already exists, a peer won the name).
   */
  async claim(session: SandboxSession, name: string, token: string): Promise<SandboxHandle | undefined> {
    const { docker } = this.host;
    const workspace = `${name}-workspace`;
    try {
      await docker.getVolume(workspace).inspect();
      return undefined; // an existing workspace must be mounted by a new container
    } catch (err) {
      if (statusCode(err) !== 404) throw err;
    }
    const waiting = (await this.listSlots()).filter((c) => c.State === 'running');
    for (const c of waiting.sort(() => Math.random() - 0.5)) {
      if (!(await this.claimDaemon(c, token, this.host.config.idleTimeoutMs))) continue;
      const handle = await this.adopt(c, session, name, token);
      void this.fill();
      return handle;
    }
    if (waiting.length === 0) void this.fill();
    return undefined;
  }

  /** Steps 2 and 3 of the claim, on a pool sandbox this process has claimed. */
  private async adopt(
    c: ContainerInfo,
    session: SandboxSession,
    name: string,
    token: string,
  ): Promise<SandboxHandle | undefined> {
    const { docker, logger } = this.host;
    const poolId = c.Labels[LABEL.pool]!;
    const poolVolume = poolVolumeName(poolId);
    const workspace = `${name}-workspace`;
    const mountpoint = (await docker.getVolume(poolVolume).inspect()).Mountpoint;
    await docker.createVolume({
      Name: workspace,
      Labels: { ...sessionLabels(session), ...this.host.ownLabels, [LABEL.pool]: poolId },
      DriverOpts: { type: 'none', o: 'bind', device: mountpoint },
    });
    const made = await docker.getVolume(workspace).inspect();
    if (made.Labels?.[LABEL.pool] !== poolId) {
      // The session got a workspace meanwhile (a peer): this pool sandbox is of no use to it.
      await this.discard(c.Id, poolId);
      return undefined;
    }
    try {
      await docker.getContainer(c.Id).rename({ name });
    } catch (err) {
      // 409: a peer created the session's container first, on our alias. Keep the volume: it is the workspace now.
      await this.host.removeContainer(c.Id);
      if (statusCode(err) === 409 || statusCode(err) === 404) return undefined;
      throw err;
    }
    logger.info(
      { sandbox: name, container: c.Id.slice(0, 12), pool: poolId },
      'sandbox claimed from the pool',
    );
    const endpoint = this.endpointOf(c)!;
    return { name, id: c.Id, endpoint, token, created: true, pooled: true };
  }

  /** Removes a pool sandbox that no session uses: container, volume, socket folder. */
  private async discard(containerId: string | undefined, poolId: string | undefined): Promise<void> {
    if (containerId) await this.host.removeContainer(containerId);
    if (poolId) await this.removePoolVolume(poolId);
  }

  /** Removes a pool volume and its socket folder unless a session's workspace alias points at it. */
  async removePoolVolume(poolId: string, evenIfAliased = false): Promise<void> {
    const { docker, config } = this.host;
    if (!evenIfAliased) {
      const { Volumes } = await docker.listVolumes({
        filters: JSON.stringify({ label: [`${LABEL.pool}=${poolId}`, LABEL.session] }),
      });
      if ((Volumes ?? []).length > 0) return;
    }
    for (let i = 0; i < 20; i++) {
      try {
        await docker.getVolume(poolVolumeName(poolId)).remove();
        break;
      } catch (err) {
        if (statusCode(err) === 404) break;
        if (statusCode(err) !== 409) throw err;
        await new Promise((r) => setTimeout(r, 100)); // the container's removal has not released it yet
      }
    }
    await rm(path.join(config.hostDir, this.socketDir(poolId)), { recursive: true, force: true });
  }

  /** Tops the pool up to SANDBOX_POOL_SIZE, one container at a time (a burst of starts would slow live sandboxes). */
  fill(): Promise<void> {
    if (this.size === 0 || this.closed) return Promise.resolve();
    this.filling ??= this.fillOnce()
      .catch((err: unknown) =>
        this.host.logger.warn({ err: (err as Error).message }, 'could not refill the sandbox pool'),
      )
      .finally(() => (this.filling = undefined));
    return this.filling;
  }

  private async fillOnce(): Promise<void> {
    const bySlot = new Map((await this.listSlots()).map((c) => [c.Names[0]!.replace(/^\//, ''), c]));
    for (let i = 0; i < this.size && !this.closed; i++) {
      const slot = `${this.slotPrefix}${i}`;
      const existing = bySlot.get(slot);
      if (existing) {
        if (existing.State === 'running') continue;
        if (existing.State === 'created' && Date.now() - existing.Created * 1000 < CREATED_GRACE_MS) continue;
        await this.discard(existing.Id, existing.Labels[LABEL.pool]);
      }
      await this.startSlot(slot);
    }
  }

  private async startSlot(slot: string): Promise<void> {
    const { config, docker } = this.host;
    const poolId = randomBytes(8).toString('hex');
    const labels = { [LABEL.sandbox]: '1', ...this.host.ownLabels, [LABEL.pool]: poolId };
    await docker.createVolume({ Name: poolVolumeName(poolId), Labels: labels });
    const id = await this.host.createFromPlan({
      name: slot,
      labels,
      token: this.poolToken(poolId),
      volume: poolVolumeName(poolId),
      socketDir: this.socketDir(poolId),
      image: config.defaultImage,
      limits: config.limits,
      skills: [],
      idleTimeoutMs: config.poolIdleTimeoutMs,
      pool: true,
      round: 0,
    });
    if (!id) {
      await this.removePoolVolume(poolId); // a peer filled this slot first
      return;
    }
    try {
      await docker.getContainer(id).start();
    } catch (err) {
      await this.discard(id, poolId);
      throw err;
    }
  }

  /** Reaper pass: replace dead slots, remove volumes a crash left behind. */
  async maintain(): Promise<void> {
    const { docker, config } = this.host;
    const slots = await this.listSlots();
    const { Volumes } = await docker.listVolumes({
      filters: JSON.stringify({ label: [`${LABEL.installation}=${config.installation}`, LABEL.pool] }),
    });
    const containers = await docker.listContainers({
      all: true,
      filters: JSON.stringify({ label: [`${LABEL.installation}=${config.installation}`, LABEL.pool] }),
    });
    const used = new Set(containers.map((c) => c.Labels[LABEL.pool]));
    const aliased = new Set(
      (Volumes ?? []).filter((v) => v.Labels?.[LABEL.session]).map((v) => v.Labels[LABEL.pool]),
    );
    for (const v of Volumes ?? []) {
      const poolId = v.Labels?.[LABEL.pool];
      if (!poolId || v.Labels[LABEL.session] || used.has(poolId) || aliased.has(poolId)) continue;
      const created = Date.parse((v as { CreatedAt?: string }).CreatedAt ?? '');
      if (Number.isFinite(created) && Date.now() - created > ORPHAN_VOLUME_MS)
        await this.removePoolVolume(poolId);
    }
    for (const c of slots) {
      if (c.State === 'exited' || c.State === 'dead') await this.discard(c.Id, c.Labels[LABEL.pool]);
    }
    await this.fill();
  }

  /** Removes the waiting pool sandboxes (claiming each first, so none is taken from under a session). */
  async drain(): Promise<void> {
    this.closed = true;
    await this.filling;
    for (const c of await this.listSlots()) {
      const poolId = c.Labels[LABEL.pool];
      const mine =
        c.State !== 'running' || (await this.claimDaemon(c, randomBytes(24).toString('hex'), 1_000));
      if (mine) await this.discard(c.Id, poolId);
    }
  }
}
