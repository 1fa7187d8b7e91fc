/** Daemon settings, read once from the environment at start-up (docs/configuration.md#sandboxes). */
export interface DaemonConfig {
  /** Bearer token every request except /health must present. */
  token: string;
  host: string;
  port: number;
  /** When set, listen on this Unix socket instead of host:port. */
  socket: string | undefined;
  /** Octal permission bits for the socket file, e.g. 0o600. */
  socketMode: number;
  root: string;
  /** 0 disables idle shutdown. */
  idleTimeoutMs: number;
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  maxOutputBytes: number;
  maxFileBytes: number;
  maxJsonBytes: number;
  /** Start commands through the Python fork server when python3 exists (SANDBOX_FORK_SERVER=0 turns it off). */
  forkServer: boolean;
  /** A pool sandbox waiting to be claimed by a session (POST /claim); see handlers/claim.ts. */
  pool: boolean;
  /** How long the result of a finished execution with an `id` is kept for a repeat request (operations/exec-registry.ts). */
  execRetentionMs: number;
  /** At most this many finished executions are kept; the oldest go first. */
  execRetentionMaxEntries: number;
  /** At most this many bytes of kept output (stdout + stderr); the oldest go first, the newest is always kept. */
  execRetentionMaxBytes: number;
}

function int(env: NodeJS.ProcessEnv, key: string, fallback: number, min = 0): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${key} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

/** Throws a one-line Error naming the bad variable; a daemon without a token must not start. */
export function loadDaemonConfig(env: NodeJS.ProcessEnv): DaemonConfig {
  const token = env.SANDBOX_TOKEN ?? '';
  if (token.length < 16)
    throw new Error('SANDBOX_TOKEN must be set (at least 16 characters); refusing to start without it');
  const socketModeRaw = env.SANDBOX_SOCKET_MODE ?? '600';
  const socketMode = parseInt(socketModeRaw, 8);
  if (!/^[0-7]{3,4}$/.test(socketModeRaw))
    throw new Error(`SANDBOX_SOCKET_MODE must be octal like 600, got "${socketModeRaw}"`);
  return {
    token,
    host: env.SANDBOX_HOST || '0.0.0.0',
    port: int(env, 'SANDBOX_PORT', 8080),
    socket: env.SANDBOX_SOCKET || undefined,
    socketMode,
    root: env.SANDBOX_ROOT || '/sandbox/workspace',
    idleTimeoutMs: int(env, 'SANDBOX_IDLE_TIMEOUT_MS', 30_000),
    defaultTimeoutMs: int(env, 'SANDBOX_DEFAULT_TIMEOUT_MS', 60_000, 1),
    maxTimeoutMs: int(env, 'SANDBOX_MAX_TIMEOUT_MS', 600_000, 1),
    maxOutputBytes: int(env, 'SANDBOX_MAX_OUTPUT_BYTES', 1024 * 1024, 1),
    maxFileBytes: int(env, 'SANDBOX_MAX_FILE_BYTES', 64 * 1024 * 1024, 1),
    maxJsonBytes: int(env, 'SANDBOX_MAX_JSON_BYTES', 4 * 1024 * 1024, 1),
    forkServer: env.SANDBOX_FORK_SERVER !== '0',
    pool: env.SANDBOX_POOL === '1',
    execRetentionMs: int(env, 'SANDBOX_EXEC_RETENTION_MS', 15 * 60_000),
    execRetentionMaxEntries: int(env, 'SANDBOX_EXEC_RETENTION_MAX_ENTRIES', 500),
    execRetentionMaxBytes: int(env, 'SANDBOX_EXEC_RETENTION_MAX_BYTES', 32 * 1024 * 1024),
  };
}
