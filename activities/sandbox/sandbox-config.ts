/**
 * Sandbox settings from the environment (docs/configuration.md#sandboxes), validated with joi. The API and
 * the worker both call loadSandboxConfig; a bad value throws one line naming
 * the variable.
 */
import Joi from 'joi';
import { createHash } from 'node:crypto';
import path from 'node:path';
import pkg from '../../package.json' with { type: 'json' };
import { SandboxConfigError } from './errors.js';

export type SandboxBackendName = 'docker' | 'kubernetes' | 'process';

export interface SandboxLimits {
  memoryMb: number;
  cpus: number;
  pids: number;
}

export interface SandboxConfig {
  enabled: boolean;
  backend: SandboxBackendName;
  defaultImage: string;
  /** `none` (default), `host`, or a named Docker network. */
  dockerNetwork: string;
  idleTimeoutMs: number;
  readyTimeoutMs: number;
  commandTimeoutMs: number;
  maxTimeoutMs: number;
  maxOutputBytes: number;
  limits: SandboxLimits;
  /** uid:gid the daemon runs as; the socket folder is handed to it. */
  user: string;
  /** Absolute folder holding one sub-folder per session (socket; process backend: workspace too). */
  hostDir: string;
  dataDir: string;
  /** Secret the per-sandbox tokens are derived from; when unset, one is generated into dataDir. */
  tokenSecret: string | undefined;
  portRange: { from: number; to: number };
  k8s: { namespace: string; storageClass: string | undefined; workspaceSize: string; daemonPort: number };
  reapIntervalMs: number;
  reapIdleMs: number;
  /**
   * Label value marking this installation's sandboxes, so installations sharing
   * one Docker engine (or Kubernetes namespace) never list or reap each other's.
   */
  installation: string;
  /** Docker backend: pre-started sandboxes a new session claims instead of waiting for a container start. */
  poolSize: number;
  /** How long an unclaimed pool sandbox waits before stopping itself (0: never). */
  poolIdleTimeoutMs: number;
}

export const SANDBOX_VERSION: string = pkg.version;

export const sandboxConfigSchema = Joi.object({
  SANDBOX_ENABLED: Joi.boolean().truthy('1', 'yes', 'on').falsy('0', 'no', 'off').default(false),
  SANDBOX_BACKEND: Joi.string().valid('docker', 'kubernetes', 'process').default('docker'),
  SANDBOX_DEFAULT_IMAGE: Joi.string().min(1).max(512).default(`agent-sandbox:${SANDBOX_VERSION}`),
  SANDBOX_DOCKER_NETWORK: Joi.string()
    .pattern(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'network name')
    .default('none'),
  SANDBOX_IDLE_TIMEOUT_MS: Joi.number().integer().min(0).max(86_400_000).default(30_000),
  SANDBOX_READY_TIMEOUT_MS: Joi.number().integer().min(100).max(600_000).default(30_000),
  SANDBOX_COMMAND_TIMEOUT_MS: Joi.number().integer().min(1).max(3_600_000).default(60_000),
  SANDBOX_MAX_TIMEOUT_MS: Joi.number().integer().min(1).max(3_600_000).default(600_000),
  SANDBOX_MAX_OUTPUT_BYTES: Joi.number()
    .integer()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  SANDBOX_MEMORY_MB: Joi.number()
    .integer()
    .min(16)
    .max(1024 * 1024)
    .default(512),
  SANDBOX_CPUS: Joi.number().min(0.01).max(256).default(1),
  SANDBOX_PIDS_LIMIT: Joi.number().integer().min(8).max(1_000_000).default(256),
  SANDBOX_USER: Joi.string()
    .pattern(/^\d+:\d+$/, 'uid:gid')
    .default('1000:1000'),
  SANDBOX_HOST_DIR: Joi.string().min(1),
  DATA_DIR: Joi.string().min(1).default('.data'),
  SANDBOX_TOKEN_SECRET: Joi.string().min(32).max(512),
  SANDBOX_PORT_RANGE: Joi.string()
    .pattern(/^\d{1,5}-\d{1,5}$/, 'from-to')
    .default('30000-30999'),
  SANDBOX_K8S_NAMESPACE: Joi.string()
    .pattern(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'DNS label')
    .max(63)
    .default('default'),
  SANDBOX_K8S_STORAGE_CLASS: Joi.string().min(1),
  SANDBOX_K8S_WORKSPACE_SIZE: Joi.string()
    .pattern(/^\d+(Ki|Mi|Gi|Ti)$/, 'quantity like 1Gi')
    .default('1Gi'),
  SANDBOX_K8S_DAEMON_PORT: Joi.number().integer().min(1).max(65535).default(8080),
  SANDBOX_REAP_INTERVAL_MS: Joi.number().integer().min(1000).max(86_400_000).default(60_000),
  SANDBOX_REAP_IDLE_MS: Joi.number()
    .integer()
    .min(1000)
    .max(30 * 86_400_000)
    .default(3_600_000),
  SANDBOX_INSTALLATION: Joi.string().pattern(
    /^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$/,
    'label value (letters, digits, "-", "_", ".", at most 63)',
  ),
  SANDBOX_POOL_SIZE: Joi.number().integer().min(0).max(64).default(2),
  SANDBOX_POOL_IDLE_TIMEOUT_MS: Joi.number().integer().min(0).max(86_400_000).default(600_000),
})
  .unknown(true)
  .prefs({ abortEarly: true, convert: true, errors: { wrap: { label: false } } });

type Env = Record<string, string | undefined>;

export function loadSandboxConfig(env: Env = process.env): SandboxConfig {
  // Empty strings count as unset, as shells and .env files often produce them.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = sandboxConfigSchema.validate(cleaned);
  const error = result.error;
  if (error) {
    const detail = error.details[0];
    const key = String(detail?.path[0] ?? '');
    const got = cleaned[key];
    const shown = got !== undefined && !/SECRET|TOKEN/.test(key) ? ` (got "${got}")` : '';
    throw new SandboxConfigError(
      `Invalid sandbox configuration: ${detail?.message ?? error.message}${shown}`,
    );
  }
  const v = result.value as Record<string, unknown>;
  const [from, to] = String(v.SANDBOX_PORT_RANGE)
    .split('-')
    .map((part) => Number(part)) as [number, number];
  if (from < 1024 || to > 65535 || from > to) {
    throw new SandboxConfigError(
      `Invalid sandbox configuration: SANDBOX_PORT_RANGE must be from-to within 1024-65535 (got "${String(v.SANDBOX_PORT_RANGE)}")`,
    );
  }
  if ((v.SANDBOX_COMMAND_TIMEOUT_MS as number) > (v.SANDBOX_MAX_TIMEOUT_MS as number)) {
    throw new SandboxConfigError(
      'Invalid sandbox configuration: SANDBOX_COMMAND_TIMEOUT_MS must not exceed SANDBOX_MAX_TIMEOUT_MS',
    );
  }
  const dataDir = path.resolve(v.DATA_DIR as string);
  const hostDir = path.resolve((v.SANDBOX_HOST_DIR as string | undefined) ?? path.join(dataDir, 'sandboxes'));
  return {
    enabled: v.SANDBOX_ENABLED as boolean,
    backend: v.SANDBOX_BACKEND as SandboxBackendName,
    defaultImage: v.SANDBOX_DEFAULT_IMAGE as string,
    dockerNetwork: v.SANDBOX_DOCKER_NETWORK as string,
    idleTimeoutMs: v.SANDBOX_IDLE_TIMEOUT_MS as number,
    readyTimeoutMs: v.SANDBOX_READY_TIMEOUT_MS as number,
    commandTimeoutMs: v.SANDBOX_COMMAND_TIMEOUT_MS as number,
    maxTimeoutMs: v.SANDBOX_MAX_TIMEOUT_MS as number,
    maxOutputBytes: v.SANDBOX_MAX_OUTPUT_BYTES as number,
    limits: {
      memoryMb: v.SANDBOX_MEMORY_MB as number,
      cpus: v.SANDBOX_CPUS as number,
      pids: v.SANDBOX_PIDS_LIMIT as number,
    },
    user: v.SANDBOX_USER as string,
    hostDir,
    dataDir,
    tokenSecret: v.SANDBOX_TOKEN_SECRET as string | undefined,
    portRange: { from, to },
    k8s: {
      namespace: v.SANDBOX_K8S_NAMESPACE as string,
      storageClass: v.SANDBOX_K8S_STORAGE_CLASS as string | undefined,
      workspaceSize: v.SANDBOX_K8S_WORKSPACE_SIZE as string,
      daemonPort: v.SANDBOX_K8S_DAEMON_PORT as number,
    },
    reapIntervalMs: v.SANDBOX_REAP_INTERVAL_MS as number,
    reapIdleMs: v.SANDBOX_REAP_IDLE_MS as number,
    // Two installations on one host cannot share a host folder (the daemons' sockets live there), so it names one.
    installation:
      (v.SANDBOX_INSTALLATION as string | undefined) ??
      `h${createHash('sha256').update(hostDir).digest('hex').slice(0, 12)}`,
    poolSize: v.SANDBOX_POOL_SIZE as number,
    poolIdleTimeoutMs: v.SANDBOX_POOL_IDLE_TIMEOUT_MS as number,
  };
}
