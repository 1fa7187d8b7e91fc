/**
 * The daemon: puts the parts together (auth, idle shutdown, pool claim, the
 * request handler and router, the fork server) and listens on TCP or a Unix
 * socket. `createDaemon` never installs signal handlers or exits the
 * process; main.ts does that.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { DaemonConfig } from './config.js';
import { createExecContext, forkServerWanted, startForkServer } from './exec-context.js';
import { PoolClaim } from './handlers/claim.js';
import { health } from './handlers/health.js';
import { BearerAuth } from './http/auth.js';
import { listen } from './http/listen.js';
import { createRequestHandler } from './http/request-handler.js';
import { IdleTracker } from './idle.js';
import { type Logger, silentLogger } from './logging.js';
import type { ExecContext } from './operations/exec-command.js';
import { ExecRegistry } from './operations/exec-registry.js';
import { route, type RouteDeps } from './routes.js';

export interface Daemon {
  server: Server;
  /** `http://host:port` or `unix:<path>`. */
  address: string;
  /** Resolves when the daemon has stopped, for whatever reason. */
  closed: Promise<'idle' | 'closed'>;
  close(): Promise<void>;
}

export async function createDaemon(
  config: DaemonConfig,
  options: { logger?: Logger; env?: NodeJS.ProcessEnv } = {},
): Promise<Daemon> {
  const logger = options.logger ?? silentLogger;
  let stopping: Promise<void> | undefined;
  let resolveClosed!: (why: 'idle' | 'closed') => void;
  const closed = new Promise<'idle' | 'closed'>((r) => (resolveClosed = r));

  mkdirSync(config.root, { recursive: true });
  const exec = createExecContext(config, options.env ?? process.env);
  const auth = new BearerAuth(config.token);
  const idle = new IdleTracker(config.idleTimeoutMs, (idleMs) => {
    logger.info('idle shutdown', { idle_ms: idleMs });
    void stop('idle');
  });
  const pool = new PoolClaim(
    config.pool,
    (token, idleTimeoutMs) => {
      auth.replace(token);
      idle.timeoutMs = idleTimeoutMs;
    },
    logger,
  );
  const deps: RouteDeps = {
    config,
    exec,
    executions: new ExecRegistry({
      retentionMs: config.execRetentionMs,
      maxEntries: config.execRetentionMaxEntries,
      maxBytes: config.execRetentionMaxBytes,
    }),
    trackProcess: (kill) => idle.trackProcess(kill),
    killers: new Map(),
    claim: (body) => pool.claim(body),
  };
  const server = createServer(
    createRequestHandler({
      auth,
      idle,
      logger,
      health: () => health(idle, pool),
      route: (req) => route(req, deps),
    }),
  );
  server.keepAliveTimeout = 5_000;

  const stop = (why: 'idle' | 'closed'): Promise<void> =>
    (stopping ??= shutdown(server, config, idle, exec, () => resolveClosed(why)));

  const address = await listen(server, config);
  idle.arm();
  // After listening: a new sandbox answers its first command (through spawn) without waiting for Python.
  if (forkServerWanted(config)) startForkServer(exec, logger, () => stopping !== undefined);
  logger.info('listening', {
    address,
    root: config.root,
    idle_timeout_ms: idle.timeoutMs,
    ...(config.pool ? { pool: true } : {}),
  });
  return { server, address, closed, close: () => stop('closed') };
}

/** Stops idle checks, running commands and the fork server, then the server itself. */
function shutdown(
  server: Server,
  config: DaemonConfig,
  idle: IdleTracker,
  exec: ExecContext,
  onClosed: () => void,
): Promise<void> {
  return new Promise<void>((resolve) => {
    idle.stop();
    exec.forkServer?.stop();
    server.close(() => {
      if (config.socket) rmSync(config.socket, { force: true });
      resolve();
      onClosed();
    });
    server.closeIdleConnections();
    // A client holding a keep-alive socket must not hold the daemon up.
    setTimeout(() => server.closeAllConnections(), 2_000).unref();
  });
}
