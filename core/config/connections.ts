import Joi from 'joi';
import { DATABASE_SSL_MODES, type DatabaseSsl, type DatabaseSslMode } from '../db/pg-ssl.js';
import type { TemporalTls } from '../temporal/connection-options.js';
import { certificateMatchesKey, PemSettingError, resolvePem, type PemKind } from '../tls/pem.js';

/**
 * The part of the configuration that reaches real clusters: TLS (and an API
 * key) to Temporal, TLS to PostgreSQL, pool sizes. env-schema.ts merges
 * these keys into the schema; loadConfig (core/config.ts) calls the resolvers below.
 */

/** A PEM value or the path of a PEM file, read and checked now; the validated value is the PEM as a Buffer. */
const pemSetting = (kind: PemKind) =>
  Joi.any().custom((value: unknown, helpers) => {
    try {
      return resolvePem(String(value), kind);
    } catch (err) {
      if (!(err instanceof PemSettingError)) throw err;
      return helpers.message({ custom: '{{#label}} {{#reason}}' }, { reason: err.message });
    }
  });

const flag = () => Joi.boolean().truthy('1', 'yes', 'on').falsy('0', 'no', 'off');

export const connectionSchemaKeys = {
  TEMPORAL_TLS: flag(),
  TEMPORAL_TLS_CERT: pemSetting('certificate'),
  TEMPORAL_TLS_KEY: pemSetting('private key'),
  TEMPORAL_TLS_CA: pemSetting('certificate'),
  TEMPORAL_TLS_SERVER_NAME: Joi.string().hostname(),
  TEMPORAL_API_KEY: Joi.string()
    .max(16_384)
    .pattern(/^\S+$/)
    .messages({ 'string.pattern.base': '{{#label}} must not contain spaces or newlines' }),
  DATABASE_SSL_MODE: Joi.string().valid(...DATABASE_SSL_MODES),
  DATABASE_SSL_CA: pemSetting('certificate'),
  DATABASE_SSL_CERT: pemSetting('certificate'),
  DATABASE_SSL_KEY: pemSetting('private key'),
  DATABASE_POOL_MIN: Joi.number().integer().min(0).max(1_000).default(0),
  DATABASE_POOL_MAX: Joi.number().integer().min(1).max(1_000).default(10),
};

/** Values of the keys above after validation (PEM settings are Buffers by then). */
type Validated = Record<string, unknown>;

/** A certificate and its key: both or neither, and the key must be the certificate's. */
function clientCertificate(
  v: Validated,
  certVar: string,
  keyVar: string,
  problems: string[],
): { cert: Buffer; key: Buffer } | undefined {
  const cert = v[certVar] as Buffer | undefined;
  const key = v[keyVar] as Buffer | undefined;
  if (!cert && !key) return undefined;
  if (!cert || !key) {
    const missing = cert ? keyVar : certVar;
    problems.push(`${certVar} and ${keyVar} go together: ${missing} is not set`);
    return undefined;
  }
  if (!certificateMatchesKey(cert, key)) {
    problems.push(`${keyVar} is not the private key of the certificate in ${certVar}`);
    return undefined;
  }
  return { cert, key };
}

const TEMPORAL_TLS_VARS = [
  'TEMPORAL_TLS_CERT',
  'TEMPORAL_TLS_KEY',
  'TEMPORAL_TLS_CA',
  'TEMPORAL_TLS_SERVER_NAME',
];

/**
 * TLS to Temporal: on with TEMPORAL_TLS=true or implied by any TEMPORAL_TLS_*
 * setting or TEMPORAL_API_KEY (Temporal Cloud takes API keys over TLS only).
 * TEMPORAL_TLS=false with an API key is allowed (a sidecar terminating TLS);
 * with a certificate setting it is a contradiction.
 */
export function resolveTemporalTls(v: Validated, problems: string[]): TemporalTls | undefined {
  const set = TEMPORAL_TLS_VARS.filter((name) => v[name] !== undefined);
  const explicit = v.TEMPORAL_TLS as boolean | undefined;
  if (explicit === false && set.length > 0) {
    problems.push(`TEMPORAL_TLS=false contradicts ${set.join(', ')}: unset one or the other`);
    return undefined;
  }
  const enabled = explicit ?? (set.length > 0 || v.TEMPORAL_API_KEY !== undefined);
  if (enabled && v.TEMPORAL_ADDRESS === undefined) {
    const cause = explicit ? 'TEMPORAL_TLS' : (set[0] ?? 'TEMPORAL_API_KEY');
    problems.push(`${cause} needs TEMPORAL_ADDRESS (the embedded Temporal dev server speaks plaintext)`);
    return undefined;
  }
  const clientCert = clientCertificate(v, 'TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY', problems);
  if (!enabled) return undefined;
  return {
    ...(v.TEMPORAL_TLS_SERVER_NAME ? { serverName: v.TEMPORAL_TLS_SERVER_NAME as string } : {}),
    ...(v.TEMPORAL_TLS_CA ? { serverCa: v.TEMPORAL_TLS_CA as Buffer } : {}),
    ...(clientCert ? { clientCert } : {}),
  };
}

const DATABASE_SSL_FILES = ['DATABASE_SSL_CA', 'DATABASE_SSL_CERT', 'DATABASE_SSL_KEY'];

/**
 * TLS to PostgreSQL, with libpq's sslmode meanings. Unset DATABASE_SSL_MODE:
 * DATABASE_URL's own parameters decide (core/db/pg-ssl.ts); the certificate
 * settings then have no mode to go with and are refused rather than ignored.
 */
export function resolveDatabaseSsl(v: Validated, problems: string[]): DatabaseSsl | undefined {
  const mode = v.DATABASE_SSL_MODE as DatabaseSslMode | undefined;
  const files = DATABASE_SSL_FILES.filter((name) => v[name] !== undefined);
  if (mode === undefined) {
    if (files.length > 0)
      problems.push(`${files[0]} needs DATABASE_SSL_MODE (require, verify-ca or verify-full)`);
    return undefined;
  }
  if (mode === 'disable') {
    if (files.length > 0) problems.push(`DATABASE_SSL_MODE=disable contradicts ${files.join(', ')}`);
    return { mode };
  }
  if (v.DATABASE_URL === undefined) {
    problems.push('DATABASE_SSL_MODE needs DATABASE_URL (the embedded PostgreSQL has no TLS)');
    return undefined;
  }
  if (mode === 'verify-ca' && v.DATABASE_SSL_CA === undefined) {
    // Node would check the chain against the public CAs while ignoring the host name:
    // any certificate such a CA ever issued would pass.
    problems.push(
      'DATABASE_SSL_MODE=verify-ca needs DATABASE_SSL_CA (or use verify-full with a publicly trusted server)',
    );
  }
  const clientCert = clientCertificate(v, 'DATABASE_SSL_CERT', 'DATABASE_SSL_KEY', problems);
  return {
    mode,
    ...(v.DATABASE_SSL_CA ? { ca: v.DATABASE_SSL_CA as Buffer } : {}),
    ...(clientCert ? { clientCert } : {}),
  };
}

/** DATABASE_POOL_MIN / DATABASE_POOL_MAX of the main pool (each process's own; the telemetry pool is separate). */
export function resolveDatabasePool(v: Validated, problems: string[]): { min: number; max: number } {
  const min = v.DATABASE_POOL_MIN as number;
  const max = v.DATABASE_POOL_MAX as number;
  if (min > max) problems.push(`DATABASE_POOL_MIN must not exceed DATABASE_POOL_MAX (got ${min} and ${max})`);
  return { min, max };
}
