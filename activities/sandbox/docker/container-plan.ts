/**
 * What a sandbox container is created with — environment, mounts, limits,
 * isolation and how its daemon listens — computed from the configuration and
 * a ContainerPlan. Pure: the manager does the I/O (socket folder, host port)
 * and hands the results in. Shared by a session's container and a pool's.
 */
import path from 'node:path';
import type { ContainerCreateOptions } from 'dockerode';
import { SandboxStartError } from '../errors.js';
import type { SandboxConfig, SandboxLimits } from '../sandbox-config.js';
import { LABEL, type SkillMount } from '../sandbox-manager.js';

/** Where a sandbox sees its agent's skills (mounted read-only). */
export const SKILLS_TARGET = '/sandbox/skills';
/** The daemon's port inside the container on a published-port network. */
export const DAEMON_PORT = 8080;
/** The folder in the container where the daemon's socket is (SANDBOX_DOCKER_NETWORK=none). */
export const SOCKET_DIR = '/sandbox/run';

/** How the daemon is reached: a Unix socket (no network), a host-network port, or a published port. */
export type DockerNetworkMode = 'none' | 'host' | 'network';

export function dockerNetworkMode(dockerNetwork: string): DockerNetworkMode {
  return dockerNetwork === 'none' ? 'none' : dockerNetwork === 'host' ? 'host' : 'network';
}

/** Everything that differs between a session's container and a pool container. */
export interface ContainerPlan {
  name: string;
  labels: Record<string, string>;
  token: string;
  /** Named volume mounted at /sandbox/workspace. */
  volume: string;
  /** Folder under SANDBOX_HOST_DIR bind-mounted at /sandbox/run (the daemon's socket). */
  socketDir: string;
  image: string;
  limits: SandboxLimits;
  skills: SkillMount[];
  /** Host folder bind-mounted read-only at /sandbox/skills (SandboxSpec.skillsDir). */
  skillsDir?: string;
  idleTimeoutMs: number;
  /** A pool daemon: waits for POST /claim. */
  pool: boolean;
  /** Host networking: which port attempt this is. */
  round: number;
}

export type ContainerMounts = NonNullable<NonNullable<ContainerCreateOptions['HostConfig']>['Mounts']>;

/**
 * The workspace volume, the socket folder (`socketHostPath` on the host) and
 * the skills, read-only. Throws SandboxStartError for an invalid skill name or
 * for skillsDir together with per-skill mounts.
 */
export function containerMounts(plan: ContainerPlan, socketHostPath: string): ContainerMounts {
  const mounts: ContainerMounts = [
    { Type: 'volume', Source: plan.volume, Target: '/sandbox/workspace' },
    { Type: 'bind', Source: socketHostPath, Target: SOCKET_DIR },
  ];
  if (plan.skillsDir !== undefined) {
    // Per-skill mounts would need mount points inside this read-only mount.
    if (plan.skills.some((sk) => sk.hostPath))
      throw new SandboxStartError('a sandbox takes skillsDir or per-skill mounts, not both');
    // The folder itself, not its entries: files changed in it later show through.
    mounts.push({
      Type: 'bind',
      Source: path.resolve(plan.skillsDir),
      Target: SKILLS_TARGET,
      ReadOnly: true,
    });
  }
  for (const skill of plan.skills) {
    if (!skill.hostPath) continue;
    if (!/^[A-Za-z0-9._-]+$/.test(skill.name) || skill.name.startsWith('.'))
      throw new SandboxStartError(`invalid skill name "${skill.name}"`);
    mounts.push({
      Type: 'bind',
      Source: path.resolve(skill.hostPath),
      Target: `/sandbox/skills/${skill.name}`,
      ReadOnly: true,
    });
  }
  return mounts;
}

/** How the daemon listens, as the manager settled it before creating the container. */
export type DaemonListen =
  /** The socket's file mode: 600 when the socket folder could be handed to the sandbox user, else 666. */
  | { mode: 'none'; socketMode: string }
  /** The loopback port picked for the daemon. */
  | { mode: 'host'; port: number }
  | { mode: 'network' };

export type ContainerConfig = Pick<
  SandboxConfig,
  'dockerNetwork' | 'maxTimeoutMs' | 'commandTimeoutMs' | 'maxOutputBytes' | 'user'
>;

/** The create options of a sandbox container: capabilities dropped, no new privileges, limits, no restarts. */
export function containerCreateOptions(
  plan: ContainerPlan,
  config: ContainerConfig,
  mounts: ContainerMounts,
  listen: DaemonListen,
): ContainerCreateOptions {
  const { name, image, limits } = plan;
  const labels = { ...plan.labels };
  const env = [
    `SANDBOX_TOKEN=${plan.token}`,
    'SANDBOX_ROOT=/sandbox/workspace',
    `SANDBOX_IDLE_TIMEOUT_MS=${plan.idleTimeoutMs}`,
    `SANDBOX_MAX_TIMEOUT_MS=${config.maxTimeoutMs}`,
    `SANDBOX_DEFAULT_TIMEOUT_MS=${config.commandTimeoutMs}`,
    `SANDBOX_MAX_OUTPUT_BYTES=${config.maxOutputBytes}`,
    ...(plan.pool ? ['SANDBOX_POOL=1'] : []),
  ];
  const hostConfig: NonNullable<ContainerCreateOptions['HostConfig']> = {
    NetworkMode: config.dockerNetwork,
    Mounts: mounts,
    Memory: limits.memoryMb * 1024 * 1024,
    MemorySwap: limits.memoryMb * 1024 * 1024, // no swap on top
    NanoCpus: Math.round(limits.cpus * 1e9),
    PidsLimit: limits.pids,
    CapDrop: ['ALL'],
    SecurityOpt: ['no-new-privileges'],
    Init: true, // tini reaps the zombies of killed process groups
    RestartPolicy: { Name: 'no' },
    LogConfig: { Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '1' } },
  };
  if (listen.mode === 'none') {
    env.push(`SANDBOX_SOCKET=${SOCKET_DIR}/daemon.sock`, `SANDBOX_SOCKET_MODE=${listen.socketMode}`);
  } else if (listen.mode === 'host') {
    labels[LABEL.port] = String(listen.port);
    env.push('SANDBOX_HOST=127.0.0.1', `SANDBOX_PORT=${listen.port}`);
  } else {
    env.push(`SANDBOX_PORT=${DAEMON_PORT}`);
    hostConfig.PortBindings = { [`${DAEMON_PORT}/tcp`]: [{ HostIp: '127.0.0.1', HostPort: '' }] };
  }
  return {
    name,
    Image: image,
    Labels: labels,
    Env: env,
    User: config.user,
    WorkingDir: '/sandbox/workspace',
    HostConfig: hostConfig,
    ...(listen.mode === 'network' ? { ExposedPorts: { [`${DAEMON_PORT}/tcp`]: {} } } : {}),
  };
}
