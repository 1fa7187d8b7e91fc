/**
 * TEMPORAL_TLS*, TEMPORAL_API_KEY, DATABASE_SSL_*, DATABASE_POOL_* and
 * SECRETS_KEY_PREVIOUS: each bad value stops start-up with one line naming
 * the variable; good values become the options the Temporal SDKs and the pg
 * driver take. Certificates come from `openssl`, as an operator's would.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';
import { pgConnectionConfig } from '../../core/db/pg-ssl.js';
import { temporalConnectionOptions } from '../../core/temporal/connection-options.js';
import { createTestPki, type TestPki } from '../helpers/test-pki.js';

let pki: TestPki;
beforeAll(() => {
  pki = createTestPki();
});
afterAll(() => pki?.remove());

const TEMPORAL = { TEMPORAL_ADDRESS: 'temporal.example.com:7233' };
const DATABASE = { DATABASE_URL: 'postgres://app@db.example.com:5432/app' };

/** The one-line message of the ConfigError that `env` causes. */
function configError(env: Record<string, string | undefined>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('expected a ConfigError');
}

describe('Temporal TLS and API key', () => {
  it('is plaintext by default, and says so explicitly to the SDK', () => {
    const config = loadConfig(TEMPORAL);
    expect(config.temporalTls).toBeUndefined();
    expect(temporalConnectionOptions(config)).toEqual({ address: TEMPORAL.TEMPORAL_ADDRESS, tls: false });
  });

  it('TEMPORAL_TLS=true alone: TLS with the system CAs', () => {
    const config = loadConfig({ ...TEMPORAL, TEMPORAL_TLS: 'true' });
    expect(temporalConnectionOptions(config)).toEqual({ address: TEMPORAL.TEMPORAL_ADDRESS, tls: {} });
  });

  it('reads certificate files and accepts inline PEM, under the SDK option names', () => {
    const config = loadConfig({
      ...TEMPORAL,
      TEMPORAL_TLS_CERT: pki.client.certFile,
      TEMPORAL_TLS_KEY: pki.client.key,
      TEMPORAL_TLS_CA: pki.ca.cert,
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    });
    const { tls } = temporalConnectionOptions(config);
    expect(tls).toEqual({
      serverNameOverride: 'temporal.internal',
      serverRootCACertificate: Buffer.from(pki.ca.cert),
      clientCertPair: { crt: Buffer.from(pki.client.cert), key: Buffer.from(pki.client.key) },
    });
  });

  it('accepts inline PEM with its newlines escaped as \\n (env files cannot hold newlines)', () => {
    const escaped = (pem: string) => pem.trim().replace(/\n/g, '\\n');
    const config = loadConfig({
      ...TEMPORAL,
      TEMPORAL_TLS_CERT: escaped(pki.client.cert),
      TEMPORAL_TLS_KEY: escaped(pki.client.key),
    });
    expect(config.temporalTls?.clientCert?.cert.toString()).toBe(pki.client.cert);
    expect(config.temporalTls?.clientCert?.key.toString()).toBe(pki.client.key);
  });

  it('TEMPORAL_API_KEY implies TLS and is sent as the API key', () => {
    const config = loadConfig({ ...TEMPORAL, TEMPORAL_API_KEY: 'tcloud-key.abc' });
    expect(temporalConnectionOptions(config)).toEqual({
      address: TEMPORAL.TEMPORAL_ADDRESS,
      tls: {},
      apiKey: 'tcloud-key.abc',
    });
  });

  it('TEMPORAL_TLS=false keeps an API key in plaintext (a sidecar terminating TLS) but contradicts certificates', () => {
    const config = loadConfig({ ...TEMPORAL, TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'k' });
    expect(temporalConnectionOptions(config)).toEqual({
      address: TEMPORAL.TEMPORAL_ADDRESS,
      tls: false,
      apiKey: 'k',
    });
    expect(configError({ ...TEMPORAL, TEMPORAL_TLS: 'false', TEMPORAL_TLS_CA: pki.ca.certFile })).toBe(
      'Invalid configuration: TEMPORAL_TLS=false contradicts TEMPORAL_TLS_CA: unset one or the other',
    );
  });

  it('wants the certificate and the key together, and the key to be the certificate’s', () => {
    expect(configError({ ...TEMPORAL, TEMPORAL_TLS_CERT: pki.client.certFile })).toBe(
      'Invalid configuration: TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together: TEMPORAL_TLS_KEY is not set',
    );
    expect(configError({ ...TEMPORAL, TEMPORAL_TLS_KEY: pki.client.keyFile })).toBe(
      'Invalid configuration: TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together: TEMPORAL_TLS_CERT is not set',
    );
    expect(
      configError({
        ...TEMPORAL,
        TEMPORAL_TLS_CERT: pki.client.certFile,
        TEMPORAL_TLS_KEY: pki.server.keyFile,
      }),
    ).toBe(
      'Invalid configuration: TEMPORAL_TLS_KEY is not the private key of the certificate in TEMPORAL_TLS_CERT',
    );
  });

  it('names the variable of a missing file, a file that is not PEM, and the wrong kind of PEM', () => {
    const missing = path.join(pki.dir, 'nope.pem');
    expect(configError({ ...TEMPORAL, TEMPORAL_TLS_CA: missing })).toBe(
      `Invalid configuration: TEMPORAL_TLS_CA names a file that does not exist (${missing})`,
    );
    const notPem = path.join(pki.dir, 'not-pem.txt');
    writeFileSync(notPem, 'hello\n');
    expect(configError({ ...TEMPORAL, TEMPORAL_TLS_CA: notPem })).toBe(
      `Invalid configuration: TEMPORAL_TLS_CA is not a PEM certificate (${notPem}: no -----BEGIN CERTIFICATE----- block)`,
    );
    expect(configError({ ...TEMPORAL, TEMPORAL_TLS_CA: pki.dir })).toBe(
      `Invalid configuration: TEMPORAL_TLS_CA names a directory, not a PEM file (${pki.dir})`,
    );
    // The key where the certificate belongs, and the other way round.
    expect(
      configError({
        ...TEMPORAL,
        TEMPORAL_TLS_CERT: pki.client.keyFile,
        TEMPORAL_TLS_KEY: pki.client.keyFile,
      }),
    ).toBe(
      `Invalid configuration: TEMPORAL_TLS_CERT is not a PEM certificate (${pki.client.keyFile}: found PRIVATE KEY, expected CERTIFICATE)`,
    );
    expect(
      configError({ ...TEMPORAL, TEMPORAL_TLS_CERT: pki.client.certFile, TEMPORAL_TLS_KEY: pki.client.cert }),
    ).toBe(
      'Invalid configuration: TEMPORAL_TLS_KEY is not a PEM private key (inline value: found CERTIFICATE, expected a PRIVATE KEY)',
    );
  });

  it('never echoes a key pasted without its PEM lines, nor a multi-line value that is not PEM', () => {
    const bare = pki.client.key.split('\n').slice(1, -2).join('');
    const message = configError({
      ...TEMPORAL,
      TEMPORAL_TLS_CERT: pki.client.certFile,
      TEMPORAL_TLS_KEY: bare,
    });
    expect(message).toBe(
      'Invalid configuration: TEMPORAL_TLS_KEY looks like base64 without its -----BEGIN/-----END lines: give the whole PEM, or the path of a PEM file',
    );
    expect(configError({ ...TEMPORAL, TEMPORAL_TLS_CA: 'line one\nline two' })).toBe(
      'Invalid configuration: TEMPORAL_TLS_CA is not a PEM certificate (inline value: no -----BEGIN CERTIFICATE----- block)',
    );
  });

  it('refuses a PEM block that does not parse and an encrypted key, never echoing the key', () => {
    const garbled = pki.client.key.replace(/\n[A-Za-z0-9+/]{8}/, '\n!!!!!!!!');
    const message = configError({
      ...TEMPORAL,
      TEMPORAL_TLS_CERT: pki.client.certFile,
      TEMPORAL_TLS_KEY: garbled,
    });
    expect(message).toMatch(
      /^Invalid configuration: TEMPORAL_TLS_KEY is not a PEM private key \(inline value: the key does not parse: /,
    );
    expect(message).not.toContain('PRIVATE KEY-----');
    const encrypted = path.join(pki.dir, 'encrypted.key');
    execFileSync('openssl', [
      'pkey',
      '-in',
      pki.client.keyFile,
      '-aes256',
      '-passout',
      'pass:secret',
      '-out',
      encrypted,
    ]);
    expect(
      configError({ ...TEMPORAL, TEMPORAL_TLS_CERT: pki.client.certFile, TEMPORAL_TLS_KEY: encrypted }),
    ).toBe(
      `Invalid configuration: TEMPORAL_TLS_KEY is not a PEM private key (${encrypted}: the key is encrypted; give it without a passphrase (keep it in a Secret instead))`,
    );
  });

  it('wants TEMPORAL_ADDRESS with TLS (the embedded dev server is plaintext), a host name, and a one-token API key', () => {
    expect(configError({ TEMPORAL_TLS_CA: pki.ca.certFile })).toBe(
      'Invalid configuration: TEMPORAL_TLS_CA needs TEMPORAL_ADDRESS (the embedded Temporal dev server speaks plaintext)',
    );
    expect(configError({ TEMPORAL_API_KEY: 'k' })).toMatch(
      /^Invalid configuration: TEMPORAL_API_KEY needs TEMPORAL_ADDRESS/,
    );
    expect(configError({ ...TEMPORAL, TEMPORAL_TLS_SERVER_NAME: 'not a host' })).toBe(
      'Invalid configuration: TEMPORAL_TLS_SERVER_NAME must be a valid hostname (got "not a host")',
    );
    const message = configError({ ...TEMPORAL, TEMPORAL_API_KEY: 'secret part\nother' });
    expect(message).toBe('Invalid configuration: TEMPORAL_API_KEY must not contain spaces or newlines');
    expect(configError({ ...TEMPORAL, TEMPORAL_TLS: 'maybe' })).toBe(
      'Invalid configuration: TEMPORAL_TLS must be a boolean (got "maybe")',
    );
  });
});

describe('PostgreSQL TLS', () => {
  const ssl = (env: Record<string, string>) => {
    const config = loadConfig({ ...DATABASE, ...env });
    return pgConnectionConfig(config.databaseUrl!, config.database.ssl);
  };

  it('leaves DATABASE_URL alone when DATABASE_SSL_MODE is unset, sslmode included', () => {
    const url = `${DATABASE.DATABASE_URL}?sslmode=no-verify&application_name=x`;
    expect(ssl({ DATABASE_URL: url })).toEqual({ connectionString: url });
    expect(loadConfig(DATABASE).database.ssl).toBeUndefined();
  });

  it('gives the pg driver libpq’s meaning of each mode', () => {
    expect(ssl({ DATABASE_SSL_MODE: 'disable' }).ssl).toBe(false);
    const require = ssl({ DATABASE_SSL_MODE: 'require' }).ssl;
    expect(require).toMatchObject({ rejectUnauthorized: false });
    const verifyCa = ssl({ DATABASE_SSL_MODE: 'verify-ca', DATABASE_SSL_CA: pki.ca.certFile }).ssl;
    expect(verifyCa).toMatchObject({ ca: Buffer.from(pki.ca.cert) });
    expect(verifyCa && verifyCa.rejectUnauthorized).toBeUndefined(); // Node's default: verify the chain
    expect(verifyCa && verifyCa.checkServerIdentity?.('db.example.com', {} as never)).toBeUndefined();
    // libpq: require with a root certificate verifies the chain, like verify-ca.
    const requireWithCa = ssl({ DATABASE_SSL_MODE: 'require', DATABASE_SSL_CA: pki.ca.certFile }).ssl;
    expect(requireWithCa && requireWithCa.rejectUnauthorized).toBeUndefined();
    expect(requireWithCa && typeof requireWithCa.checkServerIdentity).toBe('function');
    const verifyFull = ssl({
      DATABASE_SSL_MODE: 'verify-full',
      DATABASE_SSL_CERT: pki.client.certFile,
      DATABASE_SSL_KEY: pki.client.key,
    }).ssl;
    expect(verifyFull).toEqual({ cert: Buffer.from(pki.client.cert), key: Buffer.from(pki.client.key) });
  });

  it('DATABASE_SSL_MODE wins over the ssl parameters of DATABASE_URL (dropped), and keeps the others', () => {
    const url = `${DATABASE.DATABASE_URL}?sslmode=require&sslrootcert=/nowhere.pem&application_name=api`;
    const { connectionString } = ssl({ DATABASE_URL: url, DATABASE_SSL_MODE: 'disable' });
    expect(connectionString).toBe(`${DATABASE.DATABASE_URL}?application_name=api`);
  });

  it('names the variable of each inconsistent setting', () => {
    expect(configError({ ...DATABASE, DATABASE_SSL_MODE: 'prefer' })).toBe(
      'Invalid configuration: DATABASE_SSL_MODE must be one of [disable, require, verify-ca, verify-full] (got "prefer")',
    );
    expect(configError({ ...DATABASE, DATABASE_SSL_CA: pki.ca.certFile })).toBe(
      'Invalid configuration: DATABASE_SSL_CA needs DATABASE_SSL_MODE (require, verify-ca or verify-full)',
    );
    expect(configError({ ...DATABASE, DATABASE_SSL_MODE: 'verify-ca' })).toBe(
      'Invalid configuration: DATABASE_SSL_MODE=verify-ca needs DATABASE_SSL_CA (or use verify-full with a publicly trusted server)',
    );
    expect(configError({ ...DATABASE, DATABASE_SSL_MODE: 'disable', DATABASE_SSL_CA: pki.ca.certFile })).toBe(
      'Invalid configuration: DATABASE_SSL_MODE=disable contradicts DATABASE_SSL_CA',
    );
    expect(
      configError({ ...DATABASE, DATABASE_SSL_MODE: 'verify-full', DATABASE_SSL_KEY: pki.client.keyFile }),
    ).toBe(
      'Invalid configuration: DATABASE_SSL_CERT and DATABASE_SSL_KEY go together: DATABASE_SSL_CERT is not set',
    );
    expect(configError({ DATABASE_SSL_MODE: 'require' })).toBe(
      'Invalid configuration: DATABASE_SSL_MODE needs DATABASE_URL (the embedded PostgreSQL has no TLS)',
    );
    const missing = path.join(pki.dir, 'missing-ca.pem');
    expect(configError({ ...DATABASE, DATABASE_SSL_MODE: 'verify-full', DATABASE_SSL_CA: missing })).toBe(
      `Invalid configuration: DATABASE_SSL_CA names a file that does not exist (${missing})`,
    );
  });
});

describe('pool sizes', () => {
  it('defaults to 0..10 and takes DATABASE_POOL_MIN / DATABASE_POOL_MAX', () => {
    expect(loadConfig({}).database.pool).toEqual({ min: 0, max: 10 });
    expect(loadConfig({ DATABASE_POOL_MIN: '2', DATABASE_POOL_MAX: '40' }).database.pool).toEqual({
      min: 2,
      max: 40,
    });
  });

  it('names a bad or inconsistent size', () => {
    expect(configError({ DATABASE_POOL_MAX: '0' })).toBe(
      'Invalid configuration: DATABASE_POOL_MAX must be greater than or equal to 1 (got "0")',
    );
    expect(configError({ DATABASE_POOL_MIN: 'few' })).toBe(
      'Invalid configuration: DATABASE_POOL_MIN must be a number (got "few")',
    );
    expect(configError({ DATABASE_POOL_MIN: '20', DATABASE_POOL_MAX: '5' })).toBe(
      'Invalid configuration: DATABASE_POOL_MIN must not exceed DATABASE_POOL_MAX (got 20 and 5)',
    );
  });
});

describe('SECRETS_KEY_PREVIOUS', () => {
  it('is read as a second key, needs SECRETS_KEY, and is never echoed', () => {
    const previous = randomBytes(32);
    const config = loadConfig({
      SECRETS_KEY: randomBytes(32).toString('base64'),
      SECRETS_KEY_PREVIOUS: previous.toString('base64'),
    });
    expect(config.secretsKeyPrevious?.equals(previous)).toBe(true);
    expect(configError({ SECRETS_KEY_PREVIOUS: previous.toString('base64') })).toBe(
      'Invalid configuration: SECRETS_KEY_PREVIOUS needs SECRETS_KEY (the new key; the previous one is only read)',
    );
    const message = configError({
      SECRETS_KEY: randomBytes(32).toString('base64'),
      SECRETS_KEY_PREVIOUS: 'short',
    });
    expect(message).toMatch(/^Invalid configuration: SECRETS_KEY_PREVIOUS must be 32 random bytes/);
    expect(message).not.toContain('short');
  });
});
