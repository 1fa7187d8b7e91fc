import type { ConnectionOptions } from 'node:tls';

/** DATABASE_SSL_MODE: libpq's sslmode values that make sense for a server-side client (no allow/prefer). */
export const DATABASE_SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
export type DatabaseSslMode = (typeof DATABASE_SSL_MODES)[number];

/** DATABASE_SSL_*, validated and with the PEM files already read (core/config-tls.ts). */
export interface DatabaseSsl {
  mode: DatabaseSslMode;
  /** DATABASE_SSL_CA: the CA(s) that signed the server's certificate; unset: the system's CAs. */
  ca?: Buffer;
  /** DATABASE_SSL_CERT / DATABASE_SSL_KEY: a client certificate, for servers that authenticate by certificate. */
  clientCert?: { cert: Buffer; key: Buffer };
}

/**
 * The connection-string parameters node-postgres reads for TLS. When
 * DATABASE_SSL_MODE is set they are dropped from DATABASE_URL: node-postgres
 * lets the URL's parameters override its `ssl` option, and its reading of
 * `sslmode` differs from libpq's (`require` verifies like `verify-full` there).
 */
const URL_SSL_PARAMETERS = ['ssl', 'sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'uselibpqcompat'];

/** What `pg.Client`/knex's `connection` needs for DATABASE_URL with these TLS settings. */
export function pgConnectionConfig(
  databaseUrl: string,
  ssl: DatabaseSsl | undefined,
): { connectionString: string; ssl?: false | ConnectionOptions } {
  // Unset: DATABASE_URL alone decides, as before these settings existed.
  if (!ssl) return { connectionString: databaseUrl };
  return { connectionString: withoutSslParameters(databaseUrl), ssl: pgSslOption(ssl) };
}

/** libpq's sslmode semantics, in the terms of Node's `tls.connect`. */
export function pgSslOption(ssl: DatabaseSsl): false | ConnectionOptions {
  if (ssl.mode === 'disable') return false;
  const options: ConnectionOptions = {};
  if (ssl.ca) options.ca = ssl.ca;
  if (ssl.clientCert) {
    options.cert = ssl.clientCert.cert;
    options.key = ssl.clientCert.key;
  }
  // libpq: `require` with a root certificate verifies the chain, as verify-ca does.
  const verifyChain = ssl.mode !== 'require' || ssl.ca !== undefined;
  if (!verifyChain) options.rejectUnauthorized = false;
  // verify-ca (and require with a CA): the chain is checked, the host name is not.
  if (ssl.mode !== 'verify-full') options.checkServerIdentity = () => undefined;
  return options;
}

function withoutSslParameters(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const present = URL_SSL_PARAMETERS.filter((p) => url.searchParams.has(p));
  if (present.length === 0) return databaseUrl;
  for (const p of present) url.searchParams.delete(p);
  return url.toString();
}
