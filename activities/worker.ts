import { createRequire } from 'node:module';
import { NativeConnection, Runtime, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import { loadConfigOrExit, type Config } from '../api/config.js';
import { createDb, type Db } from '../api/db/knex.js';
import { isMain } from '../api/is-main.js';
import { createLogger, type Logger } from '../api/logger.js';
import { temporalSettings } from '../temporal.config.js';
import { createActivities } from './index.js';

const require = createRequire(import.meta.url);

let runtimeInstalled = false;
/**
 * The Temporal runtime is process-wide: install it once, logging through pino
 * (its chatty INFO lines, such as the workflow bundle report, at debug), and
 * without its own signal handling: our entry points decide the shutdown order.
 */
function installRuntime(logger: Logger): void {
  if (runtimeInstalled) return;
  const log = logger.child({ component: 'temporal' });
  const levels = { TRACE: 'trace', DEBUG: 'debug', INFO: 'debug', WARN: 'warn', ERROR: 'error' } as const;
  const emit = (level: keyof typeof levels, message: string, meta?: Record<string, unknown>) =>
    log[levels[level]](meta ?? {}, message);
  Runtime.install({
    logger: {
      log: emit,
      trace: (m, meta) => emit('TRACE', m, meta),
      debug: (m, meta) => emit('DEBUG', m, meta),
      info: (m, meta) => emit('INFO', m, meta),
      warn: (m, meta) => emit('WARN', m, meta),
      error: (m, meta) => emit('ERROR', m, meta),
    },
    shutdownSignals: [],
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} } },
  });
  runtimeInstalled = true;
}

export interface RunningWorker {
  worker: Worker;
  /** Resolves when the worker has stopped polling and finished in-flight activities. */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

export interface WorkerOptions {
  workflowsPath?: string;
  activities?: object;
  taskQueue?: string;
}

/** Composition root of the worker: connects, registers workflows and activities, and runs. */
export async function startWorker(
  config: Config,
  logger: Logger,
  db: Db,
  options: WorkerOptions = {},
): Promise<RunningWorker> {
  installRuntime(logger);
  const settings = temporalSettings(config);
  const connection = await NativeConnection.connect({ address: settings.address });
  const worker = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: options.taskQueue ?? settings.taskQueue,
    workflowsPath: options.workflowsPath ?? require.resolve('../workflows/index.ts'),
    activities: options.activities ?? createActivities({ config, db, logger }),
    shutdownGraceTime: `${config.shutdownTimeoutMs} ms`,
  });
  const done = worker.run().finally(() => connection.close());
  done.catch((err: unknown) => logger.error({ err }, 'worker stopped with an error'));
  let stopping: Promise<void> | undefined;
  return {
    worker,
    done,
    shutdown() {
      stopping ??= (async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await done.catch(() => undefined);
      })();
      return stopping;
    },
  };
}

async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env, {
    require: ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'SECRETS_KEY'],
  });
  const logger = createLogger(config.logLevel);
  const db = createDb(config.databaseUrl!);
  const running = await startWorker(config, logger, db);
  logger.info({ taskQueue: config.temporalTaskQueue }, 'worker running');
  const stop = (signal: string) => {
    logger.info({ signal }, 'worker shutting down (finishing in-flight activities)');
    void running
      .shutdown()
      .then(() => db.destroy())
      .then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await running.done;
  await db.destroy();
}

if (isMain(import.meta.url)) {
  await main();
}
