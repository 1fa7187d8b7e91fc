/**
 * DATABASE_SSL_* reach every connection the api makes to PostgreSQL (its pool
 * and the change feed's LISTEN connection) with libpq's sslmode meanings. The
 * machine's shared PostgreSQL is not ours to reconfigure for client
 * certificates, so a TLS-terminating proxy in front of it (test/helpers/tls-proxy.ts,
 * speaking PostgreSQL's SSLRequest) demands one signed by the test CA. Where
 * the shared server has TLS on, `pg_stat_ssl` shows what DATABASE_URL's own
 * sslmode does next to DATABASE_SSL_MODE.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { createDb } from '../../core/db/knex.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { databaseUrl } from '../helpers/services.js';
import { createTestPki, type TestPki } from '../helpers/test-pki.js';
import { startTlsProxy, type TlsProxy } from '../helpers/tls-proxy.js';

const CI = process.env.CI === 'true';

let pki: TestPki;
let proxy: TlsProxy;
let misnamed: TlsProxy;
let api: TestApi | undefined;

beforeAll(async () => {
  pki = createTestPki();
  const upstream = new URL(databaseUrl());
  const target = { host: upstream.hostname, port: Number(upstream.port || 5432) };
  proxy = await startTlsProxy({
    target,
    cert: pki.server.cert,
    key: pki.server.key,
    ca: pki.ca.cert,
    protocol: 'postgres',
  });
  misnamed = await startTlsProxy({
    target,
    cert: pki.misnamedServer.cert,
    key: pki.misnamedServer.key,
    ca: pki.ca.cert,
    requireClientCert: false,
    protocol: 'postgres',
  });
});

afterAll(async () => {
  await api?.close();
  await proxy?.close();
  await misnamed?.close();
  pki?.remove();
});

/** The test database's URL, through a proxy, with extra query parameters. */
function urlVia(via: TlsProxy | undefined, query = ''): string {
  const u = new URL(databaseUrl());
  if (via) u.host = `127.0.0.1:${via.port}`;
  return `${u.toString()}${query}`;
}

/** 'connected (ssl: true|false)' as the server saw it, or the driver's error. */
async function connect(env: Record<string, string>): Promise<string> {
  const config = loadConfig(env);
  const db = createDb(config.databaseUrl!, { max: 1, ssl: config.database.ssl });
  try {
    const { rows } = await db.raw<{ rows: Array<{ ssl: boolean }> }>(
      'select ssl from pg_stat_ssl where pid = pg_backend_pid()',
    );
    return `connected (ssl: ${rows[0]?.ssl})`;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await db.destroy();
  }
}

describe('PostgreSQL over TLS', () => {
  it('the api works through a server demanding our client certificate: its pool and its change feed', async () => {
    const before = proxy.accepted.length;
    api = await startTestApi({
      DATABASE_URL: urlVia(proxy),
      DATABASE_SSL_MODE: 'verify-full',
      DATABASE_SSL_CA: pki.ca.certFile,
      DATABASE_SSL_CERT: pki.client.certFile,
      DATABASE_SSL_KEY: pki.client.key,
      OTEL_SDK_DISABLED: 'true',
      METRICS_ENABLED: 'false',
    });
    const created = await api.request<{ id: string }>('POST', '/api/agent-server/projects', {
      name: `tls-${Date.now()}`,
    });
    expect(created.status).toBe(200);
    expect((await api.request('GET', `/api/agent-server/projects/${created.body.data.id}`)).status).toBe(200);
    for (let i = 0; i < 50 && !api.server.deps.changes.live; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(api.server.deps.changes.live).toBe(true);
    const accepted = proxy.accepted.slice(before);
    expect(accepted.length).toBeGreaterThanOrEqual(2); // the pool's connection and the LISTEN connection
    expect(new Set(accepted)).toEqual(new Set(['client']));
  });

  it('fails without the client certificate, with a CA that did not sign the server, and on another name with verify-full', async () => {
    const base = { DATABASE_URL: urlVia(proxy), DATABASE_SSL_CA: pki.ca.certFile };
    expect(await connect({ ...base, DATABASE_SSL_MODE: 'verify-full' })).toMatch(
      /alert certificate required/,
    );
    expect(
      await connect({
        ...base,
        DATABASE_SSL_MODE: 'verify-full',
        DATABASE_SSL_CA: pki.otherCa.certFile,
        DATABASE_SSL_CERT: pki.client.certFile,
        DATABASE_SSL_KEY: pki.client.keyFile,
      }),
    ).toMatch(/certificate/);
    const other = { DATABASE_URL: urlVia(misnamed), DATABASE_SSL_CA: pki.ca.certFile };
    expect(await connect({ ...other, DATABASE_SSL_MODE: 'verify-full' })).toMatch(
      /Hostname\/IP does not match certificate's altnames/,
    );
    // verify-ca checks the chain only; require without a CA checks nothing (both as in libpq).
    // ("ssl: false": the TLS ends at the proxy, which hands the server a plaintext connection.)
    expect(await connect({ ...other, DATABASE_SSL_MODE: 'verify-ca' })).toBe('connected (ssl: false)');
    expect(await connect({ DATABASE_URL: urlVia(misnamed), DATABASE_SSL_MODE: 'require' })).toBe(
      'connected (ssl: false)',
    );
    expect(
      await connect({
        ...other,
        DATABASE_SSL_MODE: 'verify-ca',
        DATABASE_SSL_CA: pki.otherCa.certFile,
      }),
    ).toMatch(/certificate/);
  });

  it('DATABASE_SSL_MODE wins over sslmode in DATABASE_URL; DATABASE_URL alone keeps node-postgres’s reading', async () => {
    // Against the machine's server directly: disable drops the URL's sslmode=require.
    expect(
      await connect({ DATABASE_URL: urlVia(undefined, '?sslmode=require'), DATABASE_SSL_MODE: 'disable' }),
    ).toBe('connected (ssl: false)');
    const serverTls = await connect({ DATABASE_URL: urlVia(undefined), DATABASE_SSL_MODE: 'require' });
    if (serverTls !== 'connected (ssl: true)') {
      const reason = `the local PostgreSQL has no TLS (${serverTls}); the URL-parameter half of this test needs ssl=on`;
      if (CI) throw new Error(reason);
      console.warn(`\n*** SKIPPING: ${reason} ***\n`);
      return;
    }
    expect(await connect({ DATABASE_URL: urlVia(undefined, '?sslmode=no-verify') })).toBe(
      'connected (ssl: true)',
    );
    expect(await connect({ DATABASE_URL: urlVia(undefined) })).toBe('connected (ssl: false)');
  });
});
