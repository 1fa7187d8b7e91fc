/**
 * How the api and the worker reach Temporal: the address and, for a real
 * cluster or Temporal Cloud, TLS and an API key. One builder for every
 * connection the app makes (`Connection` from @temporalio/client in the api,
 * `NativeConnection` from @temporalio/worker in the worker): both take these
 * options under the same names, so nobody can wire TLS into one and forget it
 * in the other.
 */

/**
 * TEMPORAL_TLS_*, validated and with the PEM files already read (core/config-tls.ts).
 * In Config, undefined means plaintext: TEMPORAL_API_KEY has already switched TLS on unless TEMPORAL_TLS=false.
 */
export interface TemporalTls {
  /** TEMPORAL_TLS_SERVER_NAME: the name checked against the server's certificate (and sent as SNI). */
  serverName?: string;
  /** TEMPORAL_TLS_CA: the CA(s) that signed the server's certificate; unset: the system's CAs. */
  serverCa?: Buffer;
  /** TEMPORAL_TLS_CERT / TEMPORAL_TLS_KEY: the client certificate for mTLS. */
  clientCert?: { cert: Buffer; key: Buffer };
}

/** The SDKs' `TLSConfig` (@temporalio/common), structurally: core does not import the SDK for it. */
export interface TemporalTlsOptions {
  serverNameOverride?: string;
  serverRootCACertificate?: Uint8Array;
  clientCertPair?: { crt: Uint8Array; key: Uint8Array };
}

export interface TemporalConnectionOptions {
  address: string;
  /** false: plaintext, stated explicitly (the SDKs otherwise switch TLS on whenever an API key is set). */
  tls: TemporalTlsOptions | false;
  /** Sent as `Authorization: Bearer <key>` on every call (Temporal Cloud API keys). */
  apiKey?: string;
}

export interface TemporalConnectionSettings {
  temporalAddress?: string | undefined;
  temporalTls: TemporalTls | undefined;
  temporalApiKey: string | undefined;
}

/** Options for `Connection.connect`/`Connection.lazy` and `NativeConnection.connect`. */
export function temporalConnectionOptions(config: TemporalConnectionSettings): TemporalConnectionOptions {
  if (!config.temporalAddress) throw new Error('TEMPORAL_ADDRESS is not set');
  const tls = config.temporalTls;
  const options: TemporalConnectionOptions = { address: config.temporalAddress, tls: false };
  if (tls) {
    options.tls = {
      ...(tls.serverName ? { serverNameOverride: tls.serverName } : {}),
      ...(tls.serverCa ? { serverRootCACertificate: tls.serverCa } : {}),
      ...(tls.clientCert ? { clientCertPair: { crt: tls.clientCert.cert, key: tls.clientCert.key } } : {}),
    };
  }
  if (config.temporalApiKey) options.apiKey = config.temporalApiKey;
  return options;
}
