import type { DatabaseSsl } from '../db/pg-ssl.js';
import type { AllowedHosts } from '../security/allowed-hosts.js';
import type { CorsOrigins } from '../security/cors-origins.js';
import type { EgressSettings } from '../security/egress-policy.js';
import type { TemporalTls } from '../temporal/connection-options.js';

/**
 * All process configuration, as loadConfig (core/config.ts) returns it after
 * validating the environment once at start-up.
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
  /** Users, roles, SSO, SCIM and the audit log (core/auth/README.md). */
  auth: AuthConfig;
  /** PUBLIC_URL: the server's own external address (its host is also an allowed Host). */
  publicUrl: string | undefined;
  /**
   * ALLOWED_HOSTS, PUBLIC_URL's host and the bind address: the `Host` (and, on
   * configuration changes, `Origin`) the API answers (core/security/allowed-hosts.ts).
   */
  allowedHosts: AllowedHosts;
  /**
   * AGENT_PROTOCOL_CORS_ORIGINS: browser origins that may call the Agent
   * Protocol door cross-origin (core/security/cors-origins.ts); none by default.
   */
  agentProtocolCorsOrigins: CorsOrigins;
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
    /** SUB_AGENT_MAX_DEPTH: a sub-agent's turn this many calls below a turn a client started may not call another one. */
    subAgentMaxDepth: number;
    /** SUB_AGENT_MAX_FANOUT: the sub-agent calls one turn may make (those of one model step run at the same time). */
    subAgentMaxFanout: number;
    /** MCP_TOOL_TIMEOUT_MS: one MCP tool call (reset by the server's progress notifications). */
    mcpToolTimeoutMs: number;
    /**
     * MCP_INPUT_HOLD_MS: how long a call whose server asked a question waits
     * for the answer while connected; then the call stops, the session waits,
     * and the call is made again with the answer.
     */
    mcpInputHoldMs: number;
    /** MCP_LIST_TIMEOUT_MS: listing one MCP server's tools at the start of a turn. */
    mcpListTimeoutMs: number;
    /** MCP_TASK_POLL_MIN_MS / MCP_TASK_POLL_MAX_MS: the wait between polls of an MCP task (the server's hint kept within). */
    mcpTaskPollMinMs: number;
    mcpTaskPollMaxMs: number;
    /** MCP_TASK_MAX_MS: the longest an MCP task is followed (its own ttl when shorter). */
    mcpTaskMaxMs: number;
    /** CONVERSE_WAIT_TIMEOUT_MS: a non-streaming converse call answers with the run's status after this long. */
    converseWaitTimeoutMs: number;
    /** RUN_EVENTS_RETENTION_DAYS: stream events of runs finished longer ago are pruned (terminal events stay). */
    runEventsRetentionDays: number;
    /** RUN_EVENTS_PRUNE_INTERVAL_MS: how often the worker prunes them. */
    runEventsPruneIntervalMs: number;
  };
  /** Webhook deliveries (core/webhooks/, workflows/webhook-delivery.workflow.ts). */
  webhooks: {
    /** WEBHOOK_RETRY_INITIAL_MS: the wait before the first retry of a failed delivery attempt. */
    retryInitialMs: number;
    /** WEBHOOK_RETRY_MAX_MS: the wait between attempts doubles up to this. */
    retryMaxMs: number;
    /** WEBHOOK_EXPIRE_MS: a delivery not acknowledged this long after its event has failed. */
    expireMs: number;
    /** WEBHOOK_TIMEOUT_MS: one attempt (connect, send, answer) is a failure after this long. */
    timeoutMs: number;
    /** WEBHOOK_DELIVERIES_RETENTION_DAYS: a delivery delivered or failed this long ago is pruned. */
    deliveriesRetentionDays: number;
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
    /**
     * METRICS_TOKEN alone: the API's `/metrics` in users mode takes it, else an
     * organisation admin's credential (ADMIN_TOKEN among them while accepted).
     */
    ownToken: string | undefined;
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

/** AUTH_MODE and what goes with it: see core/auth/README.md. */
export interface AuthConfig {
  /** AUTH_MODE: `open` (default) as before users existed; `users`: every non-public route needs a credential. */
  mode: 'open' | 'users';
  /** ADMIN_TOKEN_IN_USERS_MODE: in users mode ADMIN_TOKEN is a break-glass owner credential (audited); false refuses it. */
  adminTokenInUsersMode: boolean;
  /** AUTH_SETUP_TOKEN: a fixed one-time setup token for the first owner; unset: one is printed at start. */
  setupToken: string | undefined;
  /** AUTH_SESSION_TTL_SECONDS: how long a console session lasts (default 12 h). */
  sessionTtlSeconds: number;
  /** AUTH_GROUP_ROLES: JSON, a group name (SCIM group or OIDC groups claim) to the roles it gives. */
  groupRoles: Record<string, GroupGrant>;
  /** SCIM_TOKEN: the bearer token of /scim/v2; unset: SCIM answers 401 to everyone. */
  scimToken: string | undefined;
  /** OIDC_*: single sign-on; undefined when OIDC_ISSUER is not set. */
  oidc:
    | {
        issuer: string;
        clientId: string;
        clientSecret: string | undefined;
        scopes: string;
        groupsClaim: string;
        buttonLabel: string;
        /** OIDC_JIT: a person the provider signs in with no account here gets one, as a member (default true). */
        jit: boolean;
      }
    | undefined;
  /**
   * AUTH_LOGIN_MAX_FAILURES within AUTH_LOGIN_FAILURE_WINDOW_SECONDS: failed
   * password sign-ins for one user name (ten times that from one address)
   * before further attempts are refused with 429 until the window has passed.
   */
  loginThrottle: { maxFailures: number; windowSeconds: number };
  /** AUDIT_RETENTION_DAYS: audit events older than this are deleted (default 365). */
  auditRetentionDays: number;
}

/** What membership of one group gives: an organisation role and/or roles in projects. */
export interface GroupGrant {
  org_role?: 'owner' | 'admin' | 'member';
  projects?: Record<string, 'admin' | 'developer' | 'operator' | 'viewer'>;
}
