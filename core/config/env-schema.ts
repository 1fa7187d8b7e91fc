/**
 * The environment variables, as a joi schema: what each accepts and its
 * default. Cross-variable rules and the mapping to `Config` are in
 * core/config.ts and build-config.ts.
 */
import Joi from 'joi';
import { parseAllowedHostsList } from '../security/allowed-hosts.js';
import { parseCorsOrigins } from '../security/cors-origins.js';
import { parseEgressList } from '../security/egress-policy.js';
import { TRACES_SAMPLERS } from './config-types.js';
import { connectionSchemaKeys } from './connections.js';

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

/** Every environment variable of the api and the worker: types, ranges and defaults (docs/configuration.md). */
export const envSchema = Joi.object({
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
  AUTH_MODE: Joi.string().valid('open', 'users').default('open'),
  ADMIN_TOKEN_IN_USERS_MODE: Joi.boolean().truthy('1', 'yes', 'on').falsy('0', 'no', 'off').default(true),
  AUTH_SETUP_TOKEN: Joi.string().min(16).max(512),
  AUTH_SESSION_TTL_SECONDS: Joi.number()
    .integer()
    .min(60)
    .max(30 * 86_400)
    .default(12 * 3_600),
  AUTH_GROUP_ROLES: Joi.string().max(65_536),
  SCIM_TOKEN: Joi.string().min(16).max(512),
  OIDC_ISSUER: Joi.string().uri({ scheme: ['http', 'https'] }),
  OIDC_CLIENT_ID: Joi.string().max(512),
  OIDC_CLIENT_SECRET: Joi.string().max(2_048),
  OIDC_SCOPES: Joi.string().max(1_024).default('openid email profile'),
  OIDC_GROUPS_CLAIM: Joi.string().max(200).default('groups'),
  OIDC_BUTTON_LABEL: Joi.string().max(100).default('Sign in with SSO'),
  OIDC_JIT: Joi.boolean().truthy('1', 'yes', 'on').falsy('0', 'no', 'off').default(true),
  AUTH_LOGIN_MAX_FAILURES: Joi.number().integer().min(1).max(10_000).default(10),
  AUTH_LOGIN_FAILURE_WINDOW_SECONDS: Joi.number().integer().min(1).max(86_400).default(900),
  AUDIT_RETENTION_DAYS: Joi.number().min(0.001).max(36_500).default(365),
  // Also where authorization servers send people back (/oauth/callback): no query or fragment.
  PUBLIC_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .max(2_048)
    .pattern(/^[^?#]*$/, 'without query or fragment')
    .messages({ 'string.pattern.name': '{{#label}} must be an http(s) URL without a query or fragment' }),
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
  AGENT_PROTOCOL_CORS_ORIGINS: Joi.string().custom((value: string, helpers) => {
    try {
      parseCorsOrigins(value);
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
  // Sub-agents (an agent calling another agent of its project as a tool): how deep calls nest, how many one turn makes.
  SUB_AGENT_MAX_DEPTH: Joi.number().integer().min(1).max(20).default(3),
  SUB_AGENT_MAX_FANOUT: Joi.number().integer().min(1).max(100).default(8),
  MCP_TOOL_TIMEOUT_MS: Joi.number().integer().min(100).max(3_600_000).default(120_000),
  MCP_INPUT_HOLD_MS: Joi.number().integer().min(0).max(3_600_000).default(600_000),
  MCP_LIST_TIMEOUT_MS: Joi.number().integer().min(100).max(600_000).default(10_000),
  // An MCP call its server runs as a task: polled after the server's hint kept within these, followed at most MCP_TASK_MAX_MS.
  MCP_TASK_POLL_MIN_MS: Joi.number().integer().min(50).max(3_600_000).default(1_000),
  MCP_TASK_POLL_MAX_MS: Joi.number()
    .integer()
    .min(Joi.ref('MCP_TASK_POLL_MIN_MS'))
    .max(3_600_000)
    .default(60_000),
  MCP_TASK_MAX_MS: Joi.number()
    .integer()
    .min(1_000)
    .max(30 * 86_400_000)
    .default(86_400_000),
  CONVERSE_WAIT_TIMEOUT_MS: Joi.number().integer().min(100).max(3_600_000).default(600_000),
  RUN_EVENTS_RETENTION_DAYS: Joi.number().min(0.001).max(3650).default(7),
  RUN_EVENTS_PRUNE_INTERVAL_MS: Joi.number().integer().min(1_000).max(86_400_000).default(3_600_000),
  // Webhook deliveries: first retry after WEBHOOK_RETRY_INITIAL_MS, doubling up to WEBHOOK_RETRY_MAX_MS,
  // given up WEBHOOK_EXPIRE_MS after the event (3 days by default, like most webhook senders).
  WEBHOOK_RETRY_INITIAL_MS: Joi.number().integer().min(100).max(3_600_000).default(5_000),
  WEBHOOK_RETRY_MAX_MS: Joi.number().integer().min(100).max(86_400_000).default(3_600_000),
  WEBHOOK_EXPIRE_MS: Joi.number()
    .integer()
    .min(1_000)
    .max(30 * 86_400_000)
    .default(3 * 86_400_000),
  WEBHOOK_TIMEOUT_MS: Joi.number().integer().min(100).max(300_000).default(15_000),
  // Finished deliveries (delivered or failed) are kept this long, then pruned with the run events.
  WEBHOOK_DELIVERIES_RETENTION_DAYS: Joi.number().min(0.001).max(3650).default(30),
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
