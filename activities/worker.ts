import { createRequire } from 'node:module';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { NativeConnection, Runtime, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import { loadConfigOrExit, type Config } from '../core/config.js';
import { createDb, type Db } from '../core/db/knex.js';
import { isMain } from '../core/is-main.js';
import { createLogger, type Logger } from '../core/logger.js';
import { temporalWorkerPlugin } from '../core/telemetry/temporal.js';
import { sessionTurnOf } from './session/turn-scope.js';
import { installTelemetry } from '../core/telemetry/telemetry.js';
import { installMetrics, metrics } from '../core/telemetry/metrics.js';
import { startMetricsServer, type MetricsServer } from '../core/telemetry/metrics/server.js';
import { TurnsRepository } from '../core/repositories/turns.repository.js';
import { setEgressPolicy } from '../core/security/egress-agent.js';
import { temporalSettings } from '../temporal.config.js';
import { temporalConnectionOptions } from '../core/temporal/connection-options.js';
import { SecretBox } from '../core/crypto/secrets.js';
import { GatewayPolicyService } from '../core/metering/gateway-policy.js';
import { UsageWriter } from '../core/metering/usage-writer.js';
import { evalReplayTaskQueue } from '../workflows/eval.definitions.js';
import { createActivities } from './index.js';
import { installRunWebhooks } from './webhooks/run-webhooks.js';
import { BudgetsRepository } from '../core/repositories/budgets.repository.js';
import { MemoryStoreRepository } from '../core/repositories/memory-store.repository.js';
import { WebhooksRepository } from '../core/repositories/webhooks.repository.js';
import { RunEventsRepository } from '../core/repositories/run-events.repository.js';
import { ConversationsRepository } from '../core/repositories/conversations.repository.js';
import { createSandboxManager } from './sandbox/create-sandbox-manager.js';
import { loadSandboxConfig, type SandboxConfig } from './sandbox/sandbox-config.js';
import { SandboxReaper } from './sandbox/sandbox-reaper.js';
import type { SandboxManager } from './sandbox/sandbox-manager.js';
import { pruneAuditEvents } from '../core/audit/audit-events.js';
import { pruneExpiredSignIns } from '../core/auth/housekeeping.js';

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
  /** `http://host:port/metrics` when WORKER_METRICS_PORT is set (and metrics are on). */
  metricsUrl: string | undefined;
  /** Resolves when the worker has stopped polling and finished in-flight activities. */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

export interface WorkerOptions {
  workflowsPath?: string;
  activities?: object;
  taskQueue?: string;
  /** Defaults to the SANDBOX_* environment. */
  sandboxConfig?: SandboxConfig;
}

/** The session sandboxes and their reaper (which removes sandboxes of deleted conversations and idle ones). */
async function startSandboxes(
  config: SandboxConfig,
  logger: Logger,
  db: Db,
): Promise<{ manager: SandboxManager; stop(): Promise<void> }> {
  const manager = await createSandboxManager(config, logger.child({ component: 'sandbox' }));
  if (!config.enabled) return { manager, stop: () => manager.close() };
  const conversations = new ConversationsRepository(db);
  const reaper = new SandboxReaper({
    manager,
    idleMs: config.reapIdleMs,
    logger: logger.child({ component: 'sandbox-reaper' }),
    isConversationLive: async ({ projectId, conversationId }) =>
      conversations.exists(projectId, conversationId),
  });
  reaper.start(config.reapIntervalMs);
  const unobserve = metrics().sandbox.observe({
    backend: manager.backend,
    running: () => reaper.lastRunning,
    ...(manager.poolStats ? { pool: () => manager.poolStats!() } : {}),
  });
  return {
    manager,
    async stop() {
      unobserve();
      await reaper.stop();
      await manager.close();
    },
  };
}

/** Composition root of the worker: connects, registers workflows and activities, and runs. */
export async function startWorker(
  config: Config,
  logger: Logger,
  db: Db,
  options: WorkerOptions = {},
): Promise<RunningWorker> {
  installRuntime(logger);
  const telemetry = installTelemetry('worker', config, logger);
  const registry = installMetrics('worker', config, logger);
  setEgressPolicy(config.egress);
  const settings = temporalSettings(config);
  const sandboxes = await startSandboxes(options.sandboxConfig ?? loadSandboxConfig(process.env), logger, db);
  const connection = await NativeConnection.connect(temporalConnectionOptions(config));
  if (!config.secretsKey) throw new Error('SECRETS_KEY is not set');
  const temporal = new Client({ connection, namespace: settings.namespace });
  const usage = new UsageWriter(db, logger);
  // Run events are announced to webhooks through this worker's client (activities/webhooks/run-webhooks.ts).
  const uninstallWebhooks = installRunWebhooks({ config, logger, temporal });
  const activities =
    options.activities ??
    createActivities({
      config,
      db,
      logger,
      secrets: new SecretBox(config.secretsKey, config.secretsKeyPrevious),
      policy: new GatewayPolicyService(db, { usageWriter: usage }),
      sandbox: sandboxes.manager,
      temporal,
    });
  const worker = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: options.taskQueue ?? settings.taskQueue,
    // Beside this module: `.ts` under tsx and vitest, `.js` in the server image (tsc's output).
    workflowsPath:
      options.workflowsPath ?? require.resolve(`../workflows/index${path.extname(import.meta.filename)}`),
    activities,
    shutdownGraceTime: `${config.shutdownTimeoutMs} ms`,
    // Recovery from a killed worker (target: another worker takes over its call in under 10 s
    // at the median, 15 s at most): heartbeats reach the server often (the SDK
    // would otherwise hold them for 80% of the heartbeat timeout), and a workflow task waiting
    // on a dead worker's sticky queue moves to the shared queue after 1 s rather than 10: a
    // live worker takes its sticky tasks in milliseconds, and one too busy for a second only
    // costs a history replay elsewhere (measured: a tool call's takeover 8.7–8.9 s at 2 s,
    // 7.7 s at 1 s; test/integration/sessions/worker-kill-recovery). A cancelled run's
    // activity learns of it in a heartbeat's answer: 400 ms keeps a cancel under a second.
    maxHeartbeatThrottleInterval: '400 ms',
    stickyQueueScheduleToStartTimeout: '1 second',
    // Each activity of a turn runs in the turn's context: its spans name the turn (turn-scope.ts).
    plugins: telemetry ? [temporalWorkerPlugin(telemetry, sessionTurnOf(db))] : [],
  });
  // Eval replays wait on their sessions' turns: on a queue of their own, they never hold the
  // activity slots those turns' activities need (workflows/eval.definitions.ts).
  const replays = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: evalReplayTaskQueue(options.taskQueue ?? settings.taskQueue),
    activities,
    shutdownGraceTime: `${config.shutdownTimeoutMs} ms`,
    maxHeartbeatThrottleInterval: '400 ms',
  });
  // Housekeeping: stream events of long-finished runs, ended webhook deliveries (one replica
  // prunes each at a time), budget reservations of workers that died, expired memory store items,
  // audit events older than AUDIT_RETENTION_DAYS, and expired console sessions and sign-in flows.
  const runEvents = new RunEventsRepository(db);
  const deliveries = new WebhooksRepository(db);
  const reservations = new BudgetsRepository(db);
  const storeItems = new MemoryStoreRepository(db);
  const pruneRunEventsNow = () => {
    void runEvents
      .prune(config.session.runEventsRetentionDays)
      .catch((err: unknown) => logger.warn({ err }, 'run events retention prune failed'));
    void deliveries
      .prune(config.webhooks.deliveriesRetentionDays)
      .catch((err: unknown) => logger.warn({ err }, 'webhook deliveries retention prune failed'));
    void reservations
      .pruneExpired()
      .catch((err: unknown) => logger.warn({ err }, 'expired budget reservations prune failed'));
    void storeItems
      .pruneExpired()
      .catch((err: unknown) => logger.warn({ err }, 'expired memory store items prune failed'));
    void pruneAuditEvents(db, config.auth.auditRetentionDays).catch((err: unknown) =>
      logger.warn({ err }, 'audit events retention prune failed'),
    );
    void pruneExpiredSignIns(db).catch((err: unknown) =>
      logger.warn({ err }, 'expired console sessions prune failed'),
    );
  };
  const pruneTimer = setInterval(pruneRunEventsNow, config.session.runEventsPruneIntervalMs);
  pruneTimer.unref();
  const turns = new TurnsRepository(db);
  const unobserveApprovals = metrics().session.observePendingApprovals(() => turns.pendingApprovalCount());
  let metricsServer: MetricsServer | undefined;
  if (registry && config.metrics.enabled && config.metrics.workerPort !== undefined) {
    metricsServer = await startMetricsServer(registry, {
      port: config.metrics.workerPort,
      host: config.host,
      token: config.metrics.token,
    });
    logger.info({ url: metricsServer.url }, 'worker metrics listening');
  }
  // The two stop together, whichever stops first (a shutdown, or a fatal error).
  const stopBoth = () => {
    for (const w of [worker, replays]) if (w.getState() === 'RUNNING') w.shutdown();
  };
  const done = Promise.allSettled([worker.run(), replays.run()].map((run) => run.finally(stopBoth)))
    .then((ended) => {
      const failed = ended.find((e) => e.status === 'rejected');
      if (failed) throw failed.reason;
    })
    .finally(async () => {
      clearInterval(pruneTimer);
      uninstallWebhooks();
      unobserveApprovals();
      await metricsServer?.close();
      await usage.close().catch((err: unknown) => logger.error({ err }, 'final usage flush failed'));
      await connection.close();
      await sandboxes.stop();
    });
  done.catch((err: unknown) => logger.error({ err }, 'worker stopped with an error'));
  let stopping: Promise<void> | undefined;
  return {
    worker,
    metricsUrl: metricsServer?.url,
    done,
    shutdown() {
      stopping ??= (async () => {
        stopBoth();
        await done.catch(() => undefined);
        // The last activities' spans are still queued; the process is about to exit.
        await telemetry?.flush();
      })();
      return stopping;
    },
  };
}

/** Like loadConfigOrExit: a bad SANDBOX_* value stops the process with one line. */
export function loadSandboxConfigOrExit(env = process.env): SandboxConfig {
  try {
    return loadSandboxConfig(env);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
}

async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env, {
    require: ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'SECRETS_KEY'],
  });
  const logger = createLogger(config.logLevel, undefined, config.logFormat);
  const sandboxConfig = loadSandboxConfigOrExit();
  // Before the pool exists: the pg instrumentation patches the driver when it is next required.
  installTelemetry('worker', config, logger);
  const db = createDb(config.databaseUrl!, { ...config.database.pool, ssl: config.database.ssl });
  const running = await startWorker(config, logger, db, { sandboxConfig });
  logger.info({ taskQueue: config.temporalTaskQueue }, 'worker running');
  let stopping = false;
  const stop = (signal: string) => {
    // A repeated signal must not kill the worker while it finishes in-flight activities.
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'worker shutting down (finishing in-flight activities)');
    void running
      .shutdown()
      .then(() => db.destroy())
      .then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await running.done;
  await db.destroy();
}

if (isMain(import.meta.url)) {
  await main();
}
