/**
 * The daemon's HTTP server: authentication, idle shutdown, structured request
 * logs, and listening on TCP or a Unix socket. `createDaemon` never installs
 * signal handlers or exits the process; main.ts does that.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { DaemonConfig } from './config.js';
import { BadRequestError, DaemonError, UnauthorizedError } from './errors.js';
import { type Logger, silentLogger } from './logging.js';
import { PYTHON } from './operations/exec-command.js';
import { ForkServer } from './operations/fork-server.js';
import type { ExecContext } from './operations/exec-command.js';
import { ExecRegistry } from './operations/exec-registry.js';
import { route, type RouteDeps, type RouteResult } from './routes.js';

export const DAEMON_VERSION = '1';

export interface Daemon {
  server: Server;
  /** `http://host:port` or `unix:<path>`. */
  address: string;
  /** Resolves when the daemon has stopped, for whatever reason. */
  closed: Promise<'idle' | 'closed'>;
  close(): Promise<void>;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Env for commands: the daemon's own, minus its token and settings, which commands have no business reading. */
function commandEnv(env: NodeJS.ProcessEnv, root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && !k.startsWith('SANDBOX_') && !k.startsWith('NODE_')) out[k] = v;
  }
  out.PATH ??= '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
  out.HOME ??= root;
  out.LANG ??= 'C.UTF-8';
  out.SANDBOX_ROOT = root;
  return out;
}

export async function createDaemon(
  config: DaemonConfig,
  options: { logger?: Logger; env?: NodeJS.ProcessEnv } = {},
): Promise<Daemon> {
  const logger = options.logger ?? silentLogger;
  let tokenDigest = digest(config.token);
  // A pool daemon waits (with its own idle timeout) until a manager claims it for a session (POST /claim).
  let idleTimeoutMs = config.idleTimeoutMs;
  let claimed = !config.pool;
  const running = new Set<() => void>();
  let inflight = 0;
  let lastActivity = Date.now();
  let idleTimer: NodeJS.Timeout | undefined;
  let resolveClosed!: (why: 'idle' | 'closed') => void;
  const closed = new Promise<'idle' | 'closed'>((r) => (resolveClosed = r));

  mkdirSync(config.root, { recursive: true });
  const exec: ExecContext = {
    root: config.root,
    maxOutputBytes: config.maxOutputBytes,
    baseEnv: commandEnv(options.env ?? process.env, config.root),
  };
  let forkServerRestarts = 0;
  const startForkServer = () => {
    const server = new ForkServer(PYTHON, (reason) => {
      logger.warn('fork server stopped; commands use spawn until it is back', { reason });
      if (stopping || forkServerRestarts++ >= 5) return;
      setTimeout(() => !stopping && startForkServer(), 1_000).unref();
    });
    exec.forkServer = server;
    server.start();
  };

  const deps: RouteDeps = {
    config,
    exec,
    executions: new ExecRegistry({
      retentionMs: config.execRetentionMs,
      maxEntries: config.execRetentionMaxEntries,
      maxBytes: config.execRetentionMaxBytes,
    }),
    // A running command is activity even after its caller went away (a retry may attach to it).
    trackProcess: (kill: () => void) => {
      running.add(kill);
      return () => {
        running.delete(kill);
        lastActivity = Date.now();
        if (!stopping) armIdle();
      };
    },
    claim: (body) => {
      if (!config.pool) throw new DaemonError(404, 'not_found', 'this sandbox is not a pool sandbox');
      if (claimed) throw new DaemonError(409, 'already_claimed', 'this pool sandbox is already claimed');
      const { token, idle_timeout_ms: idle } = body as { token?: unknown; idle_timeout_ms?: unknown };
      if (typeof token !== 'string' || token.length < 16)
        throw new BadRequestError('"token" must be a string of at least 16 characters');
      if (typeof idle !== 'number' || !Number.isInteger(idle) || idle < 0)
        throw new BadRequestError('"idle_timeout_ms" must be a non-negative integer');
      claimed = true;
      tokenDigest = digest(token);
      idleTimeoutMs = idle;
      logger.info('claimed', { idle_timeout_ms: idle });
      return { claimed: true };
    },
  };

  const authorized = (req: IncomingMessage): boolean => {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer (.+)$/.exec(header);
    return match !== null && timingSafeEqual(digest(match[1] ?? ''), tokenDigest);
  };

  const send = (res: ServerResponse, result: RouteResult, head: boolean): void => {
    if ('json' in result) {
      const body = JSON.stringify(result.json);
      res.writeHead(result.status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
      return;
    }
    res.writeHead(result.status, { 'content-type': result.contentType, 'content-length': result.size });
    if (head) {
      result.stream.destroy();
      res.end();
      return;
    }
    result.stream.on('error', () => res.destroy());
    result.stream.pipe(res);
  };

  const sendError = (res: ServerResponse, err: unknown): number => {
    const known = err instanceof DaemonError;
    const errno = (err as NodeJS.ErrnoException).code;
    // Permission problems inside the root are the caller's to fix, not a daemon fault.
    const status = known ? err.status : errno === 'EACCES' || errno === 'EPERM' ? 403 : 500;
    const code = known ? err.code : status === 403 ? 'forbidden' : 'internal';
    const message = known ? err.message : status === 403 ? 'permission denied' : 'internal error';
    if (!known && status === 500) logger.error('unhandled error', { error: (err as Error).message });
    if (res.headersSent) {
      res.destroy();
      return status;
    }
    const body = JSON.stringify({ error: { code, message } });
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    res.end(body);
    return status;
  };

  const server = createServer((req, res) => {
    if (req.url === '/health' && (req.method === 'GET' || req.method === 'HEAD')) {
      // Health checks do not count as activity: a polling orchestrator must not keep an idle sandbox alive.
      const body = JSON.stringify({
        status: 'ok',
        version: DAEMON_VERSION,
        running: inflight,
        idle_ms: busy() ? 0 : Date.now() - lastActivity,
        ...(config.pool ? { pool: claimed ? 'claimed' : 'waiting' } : {}),
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    const started = performance.now();
    inflight++;
    lastActivity = Date.now();
    let status = 200;
    // W3C traceparent `00-<trace id>-<span id>-<flags>`: the trace id ties this log line to the caller's trace.
    const traceId = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/.exec(
      String(req.headers.traceparent ?? ''),
    )?.[1];
    const finish = () => {
      inflight--;
      lastActivity = Date.now();
      logger.info('request', {
        method: req.method,
        path: (req.url ?? '').split('?')[0],
        status,
        duration_ms: Math.round(performance.now() - started),
        ...(traceId ? { trace_id: traceId } : {}),
      });
      armIdle();
    };
    res.once('close', finish);
    if (!authorized(req)) {
      status = sendError(res, new UnauthorizedError());
      req.resume();
      return;
    }
    route(req, deps).then(
      (result) => {
        status = result.status;
        send(res, result, req.method === 'HEAD');
      },
      (err: unknown) => {
        status = sendError(res, err);
        req.resume();
      },
    );
  });
  server.keepAliveTimeout = 5_000;

  /** Requests in flight (an attached waiter is one) or commands running, perhaps for a caller that went away. */
  const busy = () => inflight > 0 || running.size > 0;

  const armIdle = () => {
    clearTimeout(idleTimer);
    if (idleTimeoutMs === 0) return;
    const due = lastActivity + idleTimeoutMs - Date.now();
    idleTimer = setTimeout(
      () => {
        if (busy()) return; // finish() or the end of the command re-arms
        if (Date.now() - lastActivity < idleTimeoutMs) return armIdle();
        logger.info('idle shutdown', { idle_ms: Date.now() - lastActivity });
        void stop('idle');
      },
      Math.max(due, 10),
    );
  };

  let stopping: Promise<void> | undefined;
  const stop = (why: 'idle' | 'closed'): Promise<void> => {
    stopping ??= new Promise<void>((resolve) => {
      clearTimeout(idleTimer);
      for (const kill of running) kill();
      exec.forkServer?.stop();
      server.close(() => {
        if (config.socket) rmSync(config.socket, { force: true });
        resolve();
        resolveClosed(why);
      });
      server.closeIdleConnections();
      // A client holding a keep-alive socket must not hold the daemon up.
      setTimeout(() => server.closeAllConnections(), 2_000).unref();
    });
    return stopping;
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (config.socket) {
      mkdirSync(path.dirname(config.socket), { recursive: true });
      rmSync(config.socket, { force: true }); // stale socket from a previous container
      server.listen(config.socket, () => {
        chmodSync(config.socket!, config.socketMode);
        resolve();
      });
    } else {
      server.listen(config.port, config.host, () => resolve());
    }
  });
  armIdle();
  // After listening: a new sandbox answers its first command (through spawn) without waiting for Python.
  if (config.forkServer && PYTHON.startsWith('/')) startForkServer();

  const addr = server.address();
  const address =
    typeof addr === 'string'
      ? `unix:${addr}`
      : `http://${(addr as AddressInfo).address}:${(addr as AddressInfo).port}`;
  logger.info('listening', {
    address,
    root: config.root,
    idle_timeout_ms: idleTimeoutMs,
    ...(config.pool ? { pool: true } : {}),
  });
  return { server, address, closed, close: () => stop('closed') };
}
