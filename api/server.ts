import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { loadConfigOrExit, type Config } from '../core/config.js';
import { verifySecretsKey, WrongSecretsKeyError } from '../core/crypto/secrets-check.js';
import { closeDeps, createDeps, type AppDeps } from './deps.js';
import { isMain } from '../core/is-main.js';
import { createLogger, type Logger } from '../core/logger.js';
import { setEgressPolicy } from '../core/security/egress-agent.js';
import { currentTelemetry, installTelemetry } from '../core/telemetry/telemetry.js';
import { installMetrics } from '../core/telemetry/metrics.js';
import { announceSetupToken } from './services/setup-token.js';

export interface ApiServer {
  url: string;
  server: Server;
  deps: AppDeps;
  close(): Promise<void>;
}

/** Listens, and stops gracefully: no new connections, in-flight requests finish, then pools close. */
export async function startApiServer(
  config: Config,
  logger: Logger,
  givenDeps?: AppDeps,
): Promise<ApiServer> {
  // Before the pools exist: the pg instrumentation patches the driver when it is next required.
  installTelemetry('api', config, logger);
  // Process-wide as well (first call wins); recording sites find it through metrics().
  installMetrics('api', config, logger);
  // Process-wide like telemetry: provider and MCP calls connect through it (see core/security/).
  setEgressPolicy(config.egress);
  const deps = givenDeps ?? createDeps(config, logger);
  await announceSetupToken(deps.db, config, logger);
  const app = createApp(deps);
  // Handlers still running when the listener closes (their clients may be gone)
  // must finish before the pools close under them.
  let inflight = 0;
  let drained: (() => void) | undefined;
  app.middleware.unshift(async function trackInflight(_ctx, next) {
    inflight++;
    try {
      await next();
    } finally {
      if (--inflight === 0) drained?.();
    }
  });
  const server = createServer(httpServerOptions(config), app.callback());
  server.listen({ port: config.port, host: config.host });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // Default 65 s: longer than common load balancers' idle timeout.
  server.keepAliveTimeout = config.http.keepAliveTimeoutMs;
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  if (!['127.0.0.1', 'localhost', '::1'].includes(config.host) && !config.adminToken) {
    logger.warn(
      `API bound to ${config.host} without ADMIN_TOKEN: anyone who can reach this port can change configuration`,
    );
  }
  if (config.allowedHosts.derived) {
    logger.warn(
      config.allowedHosts.anyAddress
        ? `API bound to ${config.host} with neither ALLOWED_HOSTS nor PUBLIC_URL: it answers requests addressed to an IP address or a loopback name only (421 for any other Host); set ALLOWED_HOSTS to the names clients use`
        : `API bound to ${config.host} with neither ALLOWED_HOSTS nor PUBLIC_URL: it answers requests addressed to ${config.host} or a loopback name only (421 for any other Host); set ALLOWED_HOSTS to the names clients use`,
    );
  }
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    server,
    deps,
    close() {
      closing ??= (async () => {
        const done = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const timer = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
        await done;
        if (inflight > 0) {
          await Promise.race([
            new Promise<void>((resolve) => (drained = resolve)),
            new Promise((resolve) => setTimeout(resolve, config.shutdownTimeoutMs)),
          ]);
        }
        clearTimeout(timer);
        await closeDeps(deps);
        // Telemetry is process-wide (other servers may share it): flush, do not stop it.
        await currentTelemetry()?.flush();
      })();
      return closing;
    },
  };
}

/**
 * Node's own limits on receiving a request (docs/security.md#request-bodies-limits-and-timeouts):
 * its headers within HTTP_HEADERS_TIMEOUT_MS, all of it within HTTP_REQUEST_TIMEOUT_MS
 * (Node answers 408 and closes; the time taken to answer is not limited, so long
 * streams are unaffected). Node checks them every `connectionsCheckingInterval`
 * (30 s by default): often enough here for the shortest to hold within a quarter of it.
 */
function httpServerOptions(config: Config) {
  const { headersTimeoutMs, requestTimeoutMs } = config.http;
  return {
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    connectionsCheckingInterval: Math.max(25, Math.min(1_000, Math.floor(headersTimeoutMs / 4))),
  };
}

/** Checks that must pass before serving; throws WrongSecretsKeyError when SECRETS_KEY does not match the database. */
export async function preflight(deps: AppDeps): Promise<void> {
  const key = await verifySecretsKey(deps.db, deps.secrets);
  // Both keys are accepted during a rotation; say where it stands so the operator knows the next step.
  if (key === 'previous')
    deps.logger.warn('SECRETS_KEY rotation not finished: run `npm run secrets:rotate` (docs/deploy.md)');
  else if (deps.secrets.hasPreviousKey)
    deps.logger.info('SECRETS_KEY rotation finished: SECRETS_KEY_PREVIOUS can be removed');
}

async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env, {
    require: ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'SECRETS_KEY'],
  });
  const logger = createLogger(config.logLevel, undefined, config.logFormat);
  installTelemetry('api', config, logger);
  const deps = createDeps(config, logger);
  try {
    await preflight(deps);
  } catch (err) {
    if (!(err instanceof WrongSecretsKeyError)) throw err;
    process.stderr.write(`${err.message}\n`);
    await closeDeps(deps);
    process.exit(1);
  }
  const api = await startApiServer(config, logger, deps);
  logger.info({ url: api.url }, 'api listening');
  let stopping = false;
  const stop = (signal: string) => {
    // Orchestrators and impatient operators repeat signals: drain once, and
    // never let a repeat kill the process mid-drain with the default action.
    if (stopping) return logger.info({ signal }, 'already shutting down');
    stopping = true;
    logger.info({ signal }, 'api shutting down');
    api.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (isMain(import.meta.url)) {
  await main();
}
