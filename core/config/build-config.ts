/**
 * The validated environment mapped to `Config`: names grouped by what they
 * configure, secrets decoded, derived settings (allowed hosts, egress) built.
 */
import type { DatabaseSsl } from '../db/pg-ssl.js';
import { allowedHosts } from '../security/allowed-hosts.js';
import { parseCorsOrigins } from '../security/cors-origins.js';
import { egressSettings } from '../security/egress-policy.js';
import type { TemporalTls } from '../temporal/connection-options.js';
import { authConfig } from './auth-config.js';
import type { Config, GroupGrant, TracesSampler } from './config-types.js';

/** What loadConfig resolved beside the schema: the settings that need cross-variable checks. */
export interface ResolvedSettings {
  bodyBytesInFlightMax: number;
  temporalTls: TemporalTls | undefined;
  databaseSsl: DatabaseSsl | undefined;
  databasePool: { min: number; max: number };
  groupRoles: Record<string, GroupGrant>;
}

/** `v`: the environment after `envSchema` (defaults applied, values converted). */
export function buildConfig(v: Record<string, unknown>, resolved: ResolvedSettings): Config {
  return {
    port: v.PORT as number,
    host: v.HOST as string,
    maxBodyBytes: v.MAX_BODY_BYTES as number,
    http: {
      headersTimeoutMs: v.HTTP_HEADERS_TIMEOUT_MS as number,
      requestTimeoutMs: v.HTTP_REQUEST_TIMEOUT_MS as number,
      keepAliveTimeoutMs: v.HTTP_KEEP_ALIVE_TIMEOUT_MS as number,
      bodyIdleTimeoutMs: v.BODY_IDLE_TIMEOUT_MS as number,
      bodyBytesInFlightMax: resolved.bodyBytesInFlightMax,
    },
    databaseUrl: v.DATABASE_URL as string | undefined,
    database: { ssl: resolved.databaseSsl, pool: resolved.databasePool },
    temporalAddress: v.TEMPORAL_ADDRESS as string | undefined,
    temporalTls: resolved.temporalTls,
    temporalApiKey: v.TEMPORAL_API_KEY as string | undefined,
    temporalNamespace: v.TEMPORAL_NAMESPACE as string,
    temporalTaskQueue: v.TEMPORAL_TASK_QUEUE as string,
    temporalUiUrl: v.TEMPORAL_UI_URL as string | undefined,
    secretsKey: v.SECRETS_KEY ? Buffer.from(v.SECRETS_KEY as string, 'base64') : undefined,
    secretsKeyPrevious: v.SECRETS_KEY_PREVIOUS
      ? Buffer.from(v.SECRETS_KEY_PREVIOUS as string, 'base64')
      : undefined,
    adminToken: v.ADMIN_TOKEN as string | undefined,
    auth: authConfig(v, resolved.groupRoles),
    publicUrl: v.PUBLIC_URL as string | undefined,
    allowedHosts: allowedHosts({
      allowedHosts: v.ALLOWED_HOSTS as string | undefined,
      publicUrl: v.PUBLIC_URL as string | undefined,
      bindHost: v.HOST as string,
    }),
    agentProtocolCorsOrigins: parseCorsOrigins(v.AGENT_PROTOCOL_CORS_ORIGINS as string | undefined),
    logLevel: v.LOG_LEVEL as string,
    logFormat: v.LOG_FORMAT as 'json' | 'pretty' | undefined,
    dataDir: v.DATA_DIR as string,
    embeddedPostgresPort: v.EMBEDDED_PG_PORT as number,
    temporalPort: v.TEMPORAL_PORT as number,
    temporalUiPort: v.TEMPORAL_UI_PORT as number,
    temporalCliPath: v.TEMPORAL_CLI_PATH as string | undefined,
    shutdownTimeoutMs: v.SHUTDOWN_TIMEOUT_MS as number,
    sandboxEnabled: v.SANDBOX_ENABLED as boolean,
    egress: egressSettings({
      allow: v.EGRESS_ALLOW as string | undefined,
      deny: v.EGRESS_DENY as string | undefined,
      databaseUrl: v.DATABASE_URL as string | undefined,
      temporalAddress: v.TEMPORAL_ADDRESS as string | undefined,
      temporalUiUrl: v.TEMPORAL_UI_URL as string | undefined,
    }),
    session: {
      idleTimeoutMs: v.SESSION_IDLE_TIMEOUT_MS as number,
      continueAsNewTurns: v.SESSION_CONTINUE_AS_NEW_TURNS as number,
      modelHeartbeatTimeoutMs: v.SESSION_MODEL_HEARTBEAT_TIMEOUT_MS as number,
      toolHeartbeatTimeoutMs: v.SESSION_TOOL_HEARTBEAT_TIMEOUT_MS as number,
      mcpToolTimeoutMs: v.MCP_TOOL_TIMEOUT_MS as number,
      subAgentMaxDepth: v.SUB_AGENT_MAX_DEPTH as number,
      subAgentMaxFanout: v.SUB_AGENT_MAX_FANOUT as number,
      mcpInputHoldMs: v.MCP_INPUT_HOLD_MS as number,
      mcpListTimeoutMs: v.MCP_LIST_TIMEOUT_MS as number,
      mcpTaskPollMinMs: v.MCP_TASK_POLL_MIN_MS as number,
      mcpTaskPollMaxMs: v.MCP_TASK_POLL_MAX_MS as number,
      mcpTaskMaxMs: v.MCP_TASK_MAX_MS as number,
      converseWaitTimeoutMs: v.CONVERSE_WAIT_TIMEOUT_MS as number,
      runEventsRetentionDays: v.RUN_EVENTS_RETENTION_DAYS as number,
      runEventsPruneIntervalMs: v.RUN_EVENTS_PRUNE_INTERVAL_MS as number,
    },
    webhooks: {
      retryInitialMs: v.WEBHOOK_RETRY_INITIAL_MS as number,
      retryMaxMs: v.WEBHOOK_RETRY_MAX_MS as number,
      expireMs: v.WEBHOOK_EXPIRE_MS as number,
      timeoutMs: v.WEBHOOK_TIMEOUT_MS as number,
      deliveriesRetentionDays: v.WEBHOOK_DELIVERIES_RETENTION_DAYS as number,
    },
    gateway: {
      responsesRetentionDays: v.GATEWAY_RESPONSES_RETENTION_DAYS as number,
      leases: v.GATEWAY_LEASES
        ? { spendMs: v.GATEWAY_LEASE_MS as number, ttlMs: v.GATEWAY_LEASE_TTL_MS as number }
        : undefined,
    },
    metrics: {
      enabled: v.METRICS_ENABLED as boolean,
      token: (v.METRICS_TOKEN ?? v.ADMIN_TOKEN) as string | undefined,
      ownToken: v.METRICS_TOKEN as string | undefined,
      perKey: v.METRICS_PER_KEY as boolean,
      workerPort: v.WORKER_METRICS_PORT as number | undefined,
    },
    otel: {
      disabled: v.OTEL_SDK_DISABLED as boolean,
      serviceName: v.OTEL_SERVICE_NAME as string | undefined,
      otlpEndpoint: v.OTEL_EXPORTER_OTLP_ENDPOINT as string | undefined,
      recordContent: v.OTEL_RECORD_CONTENT as boolean,
      sampler: v.OTEL_TRACES_SAMPLER as TracesSampler,
      samplerRatio: v.OTEL_TRACES_SAMPLER_ARG as number,
      keepSlowMs: v.TRACE_KEEP_SLOW_MS as number,
      rollupIntervalMs: v.TRACE_ROLLUP_INTERVAL_MS as number,
      retentionDays: v.TRACE_RETENTION_DAYS as number,
      pruneIntervalMs: v.TRACE_PRUNE_INTERVAL_MS as number,
      maxQueueSize: v.OTEL_BSP_MAX_QUEUE_SIZE as number,
      maxExportBatchSize: Math.min(
        v.OTEL_BSP_MAX_EXPORT_BATCH_SIZE as number,
        v.OTEL_BSP_MAX_QUEUE_SIZE as number,
      ),
      scheduleDelayMs: v.OTEL_BSP_SCHEDULE_DELAY as number,
      exportTimeoutMs: v.OTEL_BSP_EXPORT_TIMEOUT as number,
    },
  };
}
