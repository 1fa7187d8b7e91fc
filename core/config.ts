import Joi from 'joi';
import { egressSettings, parseEgressList, type EgressSettings } from './security/egress-policy.js';
import { allowedHosts, parseAllowedHostsList, type AllowedHosts } from './security/allowed-hosts.js';
import {
  connectionSchemaKeys,
  resolveDatabasePool,
  resolveDatabaseSsl,
  resolveTemporalTls,
} from './config-connections.js';
import type { DatabaseSsl } from './db/pg-ssl.js';
import type { TemporalTls } from './temporal/connection-options.js';

/**
 * All process configuration, validated once at start-up. A bad value stops the
 * process with one line naming the variable (see `ConfigError`).
 */
export interface Config {
  port: number;
  host: string;
  maxBodyBytes: number;
  /** The HTTP server's timeouts and the limits on reading request bodies (docs/security.md#request-bodies-limits-and-timeouts). */
  http: {
    /** HTTP_HEADERS_TIMEOUT_MS: a request's headers must all arrive within this long. */
    headersTimeoutMs: number;
    /** HTTP_REQUEST_TIMEOUT_MS: a whole request (headers and body) must arrive within this long; the answer is not limited. */
    requestTimeoutMs: number;
    /** HTTP_KEEP_ALIVE_TIMEOUT_MS: an idle keep-alive connection is closed after this long. */
    keepAliveTimeoutMs: number;
    /** BODY_IDLE_TIMEOUT_MS: a request body that sends no byte for this long is a 408. */
    bodyIdleTimeoutMs: number;
    /** BODY_BYTES_IN_FLIGHT_MAX: body bytes all requests being read may hold at once; past it a 503. */
    bodyBytesInFlightMax: number;
  };
  databaseUrl: string | undefined;
  /** The main pool and TLS of every connection to PostgreSQL (core/db/pg-ssl.ts). */
  database: {
    /** DATABASE_SSL_*; undefined: DATABASE_URL's own parameters decide. */
    ssl: DatabaseSsl | undefined;
    /** DATABASE_POOL_MIN / DATABASE_POOL_MAX of each process's main pool. */
    pool: { min: number; max: number };
  };
  temporalAddress: string | undefined;
  /** TEMPORAL_TLS*; undefined: plaintext (core/temporal/connection-options.ts). */
  temporalTls: TemporalTls | undefined;
  /** TEMPORAL_API_KEY: sent as `Authorization: Bearer` on every Temporal call (Temporal Cloud). */
  temporalApiKey: string | undefined;
  temporalNamespace: string;
  temporalTaskQueue: string;
  temporalUiUrl: string | undefined;
  secretsKey: Buffer | undefined;
  /** SECRETS_KEY_PREVIOUS: during a key rotation, tried when SECRETS_KEY cannot decrypt a stored secret. */
  secretsKeyPrevious: Buffer | undefined;
  adminToken: string | undefined;
  /** PUBLIC_URL: the server's own external address (its host is also an allowed Host). */
  publicUrl: string | undefined;
  /**
   * ALLOWED_HOSTS, PUBLIC_URL's host and the bind address: the `Host` (and, on
   * configuration changes, `Origin`) the API answers (core/security/allowed-hosts.ts).
   */
  allowedHosts: AllowedHosts;
  logLevel: string;
  /** LOG_FORMAT: json, or pretty (readable lines); unset = pretty on a terminal, JSON otherwise. */
  logFormat: 'json' | 'pretty' | undefined;
  dataDir: string;
  embeddedPostgresPort: number;
  temporalPort: number;
  temporalUiPort: number;
  temporalCliPath: string | undefined;
  shutdownTimeoutMs: number;
  /** SANDBOX_ENABLED: a sandbox backend is configured (details in activities/sandbox/sandbox-config.ts). */
  sandboxEnabled: boolean;
  /**
   * EGRESS_ALLOW / EGRESS_DENY plus the built-in deny entries: what calls to LLM
   * providers and MCP servers may reach (core/security/egress-policy.ts).
   */
  egress: EgressSettings;
  /** Agent sessions (see workflows/README.md). */
  session: {
    /** SESSION_IDLE_TIMEOUT_MS: a session workflow completes after this long without a message. */
    idleTimeoutMs: number;
    /** SESSION_CONTINUE_AS_NEW_TURNS: continue-as-new after this many turns (or when Temporal suggests it). */
    continueAsNewTurns: number;
    /** SESSION_MODEL_HEARTBEAT_TIMEOUT_MS: a model call on a dead worker is retried after this long. */
    modelHeartbeatTimeoutMs: number;
    /** SESSION_TOOL_HEARTBEAT_TIMEOUT_MS: an MCP or sandbox call on a dead worker is retried after this long. */
    toolHeartbeatTimeoutMs: number;
    /** MCP_TOOL_TIMEOUT_MS: one MCP tool call (reset by the server's progress notifications). */
    mcpToolTimeoutMs: number;
    /** MCP_LIST_TIMEOUT_MS: listing one MCP server's tools at the start of a turn. */
    mcpListTimeoutMs: number;
    /** CONVERSE_WAIT_TIMEOUT_MS: a non-streaming converse call answers with the run's status after this long. */
    converseWaitTimeoutMs: number;
    /** RUN_EVENTS_RETENTION_DAYS: stream events of runs finished longer ago are pruned (terminal events stay). */
    runEventsRetentionDays: number;
    /** RUN_EVENTS_PRUNE_INTERVAL_MS: how often the worker prunes them. */
    runEventsPruneIntervalMs: number;
  };
  /** The LLM gateway (see api/gateway/README.md). */
  gateway: {
    /** GATEWAY_RESPONSES_RETENTION_DAYS: a stored Responses API answer is gone this long after it was written. */
    responsesRetentionDays: number;
    /**
     * Rate limits and budgets admitted against each replica's leases
     * (core/metering/leases.ts); undefined: GATEWAY_LEASES=false, every call
     * counts and reserves in PostgreSQL itself.
     */
    leases:
      | {
          /** GATEWAY_LEASE_MS: how long a replica spends one lease before it takes the next, giving back the rest. */
          spendMs: number;
          /** GATEWAY_LEASE_TTL_MS: a lease its replica stopped renewing (it died) is returned after this long. */
          ttlMs: number;
        }
      | undefined;
  };
  /** Metrics and the Prometheus `/metrics` endpoints (see core/telemetry/README.md). */
  metrics: {
    /** METRICS_ENABLED: record metrics and serve `/metrics`; off means neither (tracing is separate). */
    enabled: boolean;
    /**
     * The bearer token `/metrics` (api and worker) requires: METRICS_TOKEN, else
     * ADMIN_TOKEN; undefined (neither set): open. METRICS_REQUIRE_TOKEN=true
     * insists that one exists.
     */
    token: string | undefined;
    /** METRICS_PER_KEY: gateway metrics carry the virtual key id as a label (one series per key). */
    perKey: boolean;
    /** WORKER_METRICS_PORT: the worker serves `/metrics` on this port (0: any free port); unset: not at all. */
    workerPort: number | undefined;
  };
  /** Tracing settings (see core/telemetry/README.md). */
  otel: {
    /** OTEL_SDK_DISABLED: no spans stored or exported (X-Trace-Id is still sent); the statistics still count. */
    disabled: boolean;
    /** OTEL_SERVICE_NAME: replaces the role's default service name. */
    serviceName: string | undefined;
    /** OTEL_EXPORTER_OTLP_ENDPOINT: base URL of an OTLP/HTTP collector; spans also go there when set. */
    otlpEndpoint: string | undefined;
    recordContent: boolean;
    /**
     * OTEL_TRACES_SAMPLER: the standard sampler names; which traces are stored (default
     * parentbased_traceidratio). Agent turns, errors and slow traces are stored whatever it says.
     */
    sampler: TracesSampler;
    /** OTEL_TRACES_SAMPLER_ARG: the ratio of the traceidratio samplers, 0 to 1 (default 0.1). */
    samplerRatio: number;
    /** TRACE_KEEP_SLOW_MS: a trace whose local root lasts at least this long is stored even when the sampler drops it. */
    keepSlowMs: number;
    /** TRACE_ROLLUP_INTERVAL_MS: how often each process adds its span counts and latencies to `trace_rollups`. */
    rollupIntervalMs: number;
    retentionDays: number;
    pruneIntervalMs: number;
    maxQueueSize: number;
    maxExportBatchSize: number;
    scheduleDelayMs: number;
    exportTimeoutMs: number;
  };
}

/** The values of OTEL_TRACES_SAMPLER this server implements (the OpenTelemetry SDK environment names). */
export const TRACES_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TracesSampler = (typeof TRACES_SAMPLERS)[number];

/** Thrown when an environment variable is missing or invalid; its message is one printable line. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const base64Key32 = Joi.string().custom((value: string, helpers) => {
  const buf = Buffer.from(value, 'base64');
  if (buf.length !== 32 || buf.toString('base64').replace(/=+$/, '') !== value.replace(/=+$/, '')) {
    return helpers.message({
      custom: '{{#label}} must be 32 random bytes encoded as base64 (e.g. `openssl rand -base64 32`)',
    });
  }
  return value;
});

/** A comma-separated egress list; a bad entry stops start-up naming the variable and the entry. */
const egressList = (allowNone: boolean) =>
  Joi.string().custom((value: string, helpers) => {
    try {
      parseEgressList(value, { allowNone });
      return value;
    } catch (err) {
      return helpers.message(
        { custom: '{{#label}} has an invalid entry: {{#reason}}' },
        { reason: (err as Error).message },
      );
    }
  });

const schema = Joi.object({
  PORT: Joi.number().integer().min(0).max(65535).default(6060),
  HOST: Joi.string().hostname().default('127.0.0.1'),
  MAX_BODY_BYTES: Joi.number()
    .integer()
    .min(1024)
    .max(1024 ** 3)
    .default(10 * 1024 * 1024),
  // Default: 64 MiB, or MAX_BODY_BYTES when that is larger (one largest body must fit).
  BODY_BYTES_IN_FLIGHT_MAX: Joi.number()
    .integer()
    .min(1024)
    .max(64 * 1024 ** 3),
  BODY_IDLE_TIMEOUT_MS: Joi.number().integer().min(100).max(600_000).default(10_000),
  HTTP_HEADERS_TIMEOUT_MS: Joi.number().integer().min(100).max(600_000).default(30_000),
  HTTP_REQUEST_TIMEOUT_MS: Joi.number().integer().min(100).max(3_600_000).default(60_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: Joi.number().integer().min(100).max(3_600_000).default(65_000),
  DATABASE_URL: Joi.string().uri({ scheme: ['postgres', 'postgresql'] }),
  TEMPORAL_ADDRESS: Joi.string().pattern(/^[^\s:/]+:\d{1,5}$/, 'host:port'),
  TEMPORAL_NAMESPACE: Joi.string()
    .pattern(/^[A-Za-z0-9._-]{1,200}$/)
    .default('default'),
  TEMPORAL_TASK_QUEUE: Joi.string().min(1).max(200).default('agent-sessions'),
  TEMPORAL_UI_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  SECRETS_KEY: base64Key32,
  SECRETS_KEY_PREVIOUS: base64Key32,
  ...connectionSchemaKeys,
  ADMIN_TOKEN: Joi.string().min(16).max(512),
  PUBLIC_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  ALLOWED_HOSTS: Joi.string().custom((value: string, helpers) => {
    try {
      parseAllowedHostsList(value);
      return value;
    } catch (err) {
      return helpers.message(
        { custom: '{{#label}} has an invalid entry: {{#reason}}' },
        { reason: (err as Error).message },
      );
    }
  }),
  LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  LOG_FORMAT: Joi.string().valid('json', 'pretty'),
  DATA_DIR: Joi.string().min(1).default('.data'),
  EMBEDDED_PG_PORT: Joi.number().integer().min(1).max(65535).invalid(5432).default(54329),
  TEMPORAL_PORT: Joi.number().integer().min(1).max(65535).default(7233),
  TEMPORAL_UI_PORT: Joi.number().integer().min(1).max(65535).default(8233),
  TEMPORAL_CLI_PATH: Joi.string().min(1),
  SHUTDOWN_TIMEOUT_MS: Joi.number().integer().min(0).max(600_000).default(30_000),
  EGRESS_ALLOW: egressList(false),
  EGRESS_DENY: egressList(true),
  SANDBOX_ENABLED: Joi.boolean().truthy('1', 'yes', 'on').falsy('0', 'no', 'off').default(false),
  SESSION_IDLE_TIMEOUT_MS: Joi.number()
    .integer()
    .min(1_000)
    .max(30 * 86_400_000)
    .default(3_600_000),
  SESSION_CONTINUE_AS_NEW_TURNS: Joi.number().integer().min(1).max(10_000).default(100),
  // A killed worker's call is retried elsewhere this long after its last heartbeat. Activities
  // heartbeat every second and the worker sends one at least every 2 s (activities/worker.ts),
  // so a healthy call keeps 4 s of margin (an event-loop stall that long is what would retry one).
  SESSION_MODEL_HEARTBEAT_TIMEOUT_MS: Joi.number().integer().min(1_000).max(600_000).default(6_000),
  SESSION_TOOL_HEARTBEAT_TIMEOUT_MS: Joi.number().integer().min(1_000).max(600_000).default(6_000),
  MCP_TOOL_TIMEOUT_MS: Joi.number().integer().min(100).max(3_600_000).default(120_000),
  MCP_LIST_TIMEOUT_MS: Joi.number().integer().min(100).max(600_000).default(10_000),
  CONVERSE_WAIT_TIMEOUT_MS: Joi.number().integer().min(100).max(3_600_000).default(600_000),
  RUN_EVENTS_RETENTION_DAYS: Joi.number().min(0.001).max(3650).default(7),
  RUN_EVENTS_PRUNE_INTERVAL_MS: Joi.number().integer().min(1_000).max(86_400_000).default(3_600_000),
  GATEWAY_RESPONSES_RETENTION_DAYS: Joi.number().min(0.001).max(3650).default(30),
  GATEWAY_LEASES: Joi.boolean().truthy('1', 'yes', 'on').falsy('0', 'no', 'off').default(true),
  GATEWAY_LEASE_MS: Joi.number().integer().min(10).max(60_000).default(2_000),
  GATEWAY_LEASE_TTL_MS: Joi.number().integer().min(1_000).max(3_600_000).default(10_000),
  METRICS_ENABLED: Joi.boolean().truthy('1', 'yes', 'on').falsy('0', 'no', 'off').default(true),
  METRICS_REQUIRE_TOKEN: Joi.boolean().truthy('1', 'yes', 'on').falsy('0', 'no', 'off').default(false),
  METRICS_TOKEN: Joi.string().min(16).max(512),
  METRICS_PER_KEY: Joi.boolean().truthy('1', 'yes', 'on').falsy('0', 'no', 'off').default(false),
  WORKER_METRICS_PORT: Joi.number().integer().min(0).max(65535),
  OTEL_SDK_DISABLED: Joi.boolean().truthy('1', 'yes', 'on').falsy('0', 'no', 'off').default(false),
  OTEL_SERVICE_NAME: Joi.string().min(1).max(200),
  OTEL_EXPORTER_OTLP_ENDPOINT: Joi.string().uri({ scheme: ['http', 'https'] }),
  OTEL_RECORD_CONTENT: Joi.boolean().truthy('1', 'yes', 'on').falsy('0', 'no', 'off').default(false),
  // Unlike the SDK's own fallback (warn, then sample everything), an unknown sampler stops start-up:
  // a typo must not silently change what is stored.
  // Storage only: the trace statistics count every span whatever the sampler (core/telemetry/README.md).
  OTEL_TRACES_SAMPLER: Joi.string()
    .valid(...TRACES_SAMPLERS)
    .default('parentbased_traceidratio'),
  OTEL_TRACES_SAMPLER_ARG: Joi.number().min(0).max(1).default(0.1),
  TRACE_KEEP_SLOW_MS: Joi.number().integer().min(1).max(86_400_000).default(10_000),
  TRACE_ROLLUP_INTERVAL_MS: Joi.number().integer().min(100).max(300_000).default(5_000),
  TRACE_RETENTION_DAYS: Joi.number().min(0.001).max(3650).default(7),
  TRACE_PRUNE_INTERVAL_MS: Joi.number().integer().min(1_000).max(86_400_000).default(3_600_000),
  // The OpenTelemetry batch processor variables, under their standard names (values in ms).
  OTEL_BSP_MAX_QUEUE_SIZE: Joi.number().integer().min(1).max(1_000_000).default(2048),
  // A batch larger than the queue is clamped to the queue size.
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: Joi.number().integer().min(1).max(10_000).default(512),
  OTEL_BSP_SCHEDULE_DELAY: Joi.number().integer().min(1).max(600_000).default(1_000),
  OTEL_BSP_EXPORT_TIMEOUT: Joi.number().integer().min(1).max(600_000).default(30_000),
})
  .unknown(true)
  .prefs({ abortEarly: false, convert: true, errors: { wrap: { label: false } } });

type Env = Record<string, string | undefined>;

export interface LoadOptions {
  /** Services that must be configured (production commands); embedded mode fills them in itself. */
  require?: Array<'DATABASE_URL' | 'TEMPORAL_ADDRESS' | 'SECRETS_KEY'>;
}

export function loadConfig(env: Env = process.env, options: LoadOptions = {}): Config {
  // Empty strings count as unset, as shells and .env files often produce them.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const { value, error } = schema.validate(cleaned) as {
    value: Record<string, unknown>;
    error?: Joi.ValidationError;
  };
  if (error) {
    const parts = error.details.map((d) => {
      const key = String(d.path[0]);
      const got = cleaned[key];
      // Secrets are never echoed, nor PEM values (their messages name the file when there is one).
      const echo = got !== undefined && !/KEY|TOKEN|URL|_CERT$|_CA$/.test(key);
      return `${d.message}${echo ? ` (got "${got}")` : ''}`;
    });
    throw new ConfigError(`Invalid configuration: ${parts.join('; ')}`);
  }
  const missing = (options.require ?? []).filter((k) => value[k] === undefined);
  if (missing.length > 0) {
    throw new ConfigError(
      `Invalid configuration: ${missing.join(', ')} must be set (required outside embedded mode)`,
    );
  }
  const v = value;
  if (v.METRICS_REQUIRE_TOKEN && !v.ADMIN_TOKEN && !v.METRICS_TOKEN) {
    throw new ConfigError(
      'Invalid configuration: METRICS_REQUIRE_TOKEN=true needs METRICS_TOKEN or ADMIN_TOKEN (the token /metrics then asks for)',
    );
  }
  const problems: string[] = [];
  if (v.SECRETS_KEY_PREVIOUS !== undefined && v.SECRETS_KEY === undefined)
    problems.push('SECRETS_KEY_PREVIOUS needs SECRETS_KEY (the new key; the previous one is only read)');
  const maxBody = v.MAX_BODY_BYTES as number;
  const inFlightMax = (v.BODY_BYTES_IN_FLIGHT_MAX as number | undefined) ?? Math.max(64 * 1024 ** 2, maxBody);
  if (inFlightMax < maxBody)
    problems.push(
      `BODY_BYTES_IN_FLIGHT_MAX (${inFlightMax}) must be at least MAX_BODY_BYTES (${maxBody}): a largest body could never be read`,
    );
  if ((v.HTTP_HEADERS_TIMEOUT_MS as number) > (v.HTTP_REQUEST_TIMEOUT_MS as number))
    problems.push(
      `HTTP_HEADERS_TIMEOUT_MS (${v.HTTP_HEADERS_TIMEOUT_MS as number}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${v.HTTP_REQUEST_TIMEOUT_MS as number})`,
    );
  const temporalTls = resolveTemporalTls(v, problems);
  const databaseSsl = resolveDatabaseSsl(v, problems);
  const databasePool = resolveDatabasePool(v, problems);
  if (problems.length > 0) throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  return {
    port: v.PORT as number,
    host: v.HOST as string,
    maxBodyBytes: maxBody,
    http: {
      headersTimeoutMs: v.HTTP_HEADERS_TIMEOUT_MS as number,
      requestTimeoutMs: v.HTTP_REQUEST_TIMEOUT_MS as number,
      keepAliveTimeoutMs: v.HTTP_KEEP_ALIVE_TIMEOUT_MS as number,
      bodyIdleTimeoutMs: v.BODY_IDLE_TIMEOUT_MS as number,
      bodyBytesInFlightMax: inFlightMax,
    },
    databaseUrl: v.DATABASE_URL as string | undefined,
    database: { ssl: databaseSsl, pool: databasePool },
    temporalAddress: v.TEMPORAL_ADDRESS as string | undefined,
    temporalTls,
    temporalApiKey: v.TEMPORAL_API_KEY as string | undefined,
    temporalNamespace: v.TEMPORAL_NAMESPACE as string,
    temporalTaskQueue: v.TEMPORAL_TASK_QUEUE as string,
    temporalUiUrl: v.TEMPORAL_UI_URL as string | undefined,
    secretsKey: v.SECRETS_KEY ? Buffer.from(v.SECRETS_KEY as string, 'base64') : undefined,
    secretsKeyPrevious: v.SECRETS_KEY_PREVIOUS
      ? Buffer.from(v.SECRETS_KEY_PREVIOUS as string, 'base64')
      : undefined,
    adminToken: v.ADMIN_TOKEN as string | undefined,
    publicUrl: v.PUBLIC_URL as string | undefined,
    allowedHosts: allowedHosts({
      allowedHosts: v.ALLOWED_HOSTS as string | undefined,
      publicUrl: v.PUBLIC_URL as string | undefined,
      bindHost: v.HOST as string,
    }),
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
      mcpListTimeoutMs: v.MCP_LIST_TIMEOUT_MS as number,
      converseWaitTimeoutMs: v.CONVERSE_WAIT_TIMEOUT_MS as number,
      runEventsRetentionDays: v.RUN_EVENTS_RETENTION_DAYS as number,
      runEventsPruneIntervalMs: v.RUN_EVENTS_PRUNE_INTERVAL_MS as number,
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

/** Entry points call this: print the one-line reason and exit instead of a stack trace. */
export function loadConfigOrExit(env: Env = process.env, options: LoadOptions = {}): Config {
  try {
    return loadConfig(env, options);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
