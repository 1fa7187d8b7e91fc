/**
 * All process configuration, validated once at start-up. A bad value stops the
 * process with one line naming the variable (see `ConfigError`). The parts:
 * config/config-types.ts (the `Config` shape), config/env-schema.ts (every
 * variable, its range and default), config/connections.ts (TLS, API key and
 * pools of real clusters), config/build-config.ts (environment → `Config`).
 */
import type Joi from 'joi';
import { buildConfig } from './config/build-config.js';
import { resolveDatabasePool, resolveDatabaseSsl, resolveTemporalTls } from './config/connections.js';
import { envSchema } from './config/env-schema.js';
import { checkAuthSettings, parseGroupRoles } from './config/auth-config.js';
import type { Config } from './config/config-types.js';

export { TRACES_SAMPLERS, type Config, type TracesSampler } from './config/config-types.js';

/** Thrown when an environment variable is missing or invalid; its message is one printable line. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

export interface LoadOptions {
  /** Services that must be configured (production commands); embedded mode fills them in itself. */
  require?: Array<'DATABASE_URL' | 'TEMPORAL_ADDRESS' | 'SECRETS_KEY'>;
}

/** The schema's verdict on `cleaned`, or a ConfigError naming every bad variable (secrets not echoed). */
function validateEnv(cleaned: Record<string, string | undefined>): Record<string, unknown> {
  const { value, error } = envSchema.validate(cleaned) as {
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
  return value;
}

export function loadConfig(env: Env = process.env, options: LoadOptions = {}): Config {
  // Empty strings count as unset, as shells and .env files often produce them.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const v = validateEnv(cleaned);
  const missing = (options.require ?? []).filter((k) => v[k] === undefined);
  if (missing.length > 0) {
    throw new ConfigError(
      `Invalid configuration: ${missing.join(', ')} must be set (required outside embedded mode)`,
    );
  }
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
  const groupRoles = parseGroupRoles(v.AUTH_GROUP_ROLES as string | undefined, problems);
  checkAuthSettings(v, problems);
  if (problems.length > 0) throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  return buildConfig(v, {
    bodyBytesInFlightMax: inFlightMax,
    temporalTls,
    databaseSsl,
    databasePool,
    groupRoles,
  });
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
