/**
 * The api's Temporal client and the worker reach Temporal over mutual TLS,
 * configured only through TEMPORAL_TLS_* (files and inline PEM). The Temporal
 * CLI's dev server has no TLS, so a TLS-terminating proxy (test/helpers/tls-proxy.ts)
 * stands in front of it, demanding a client certificate signed by the test CA,
 * as a self-hosted cluster with mTLS does. A second, fake endpoint checks that
 * TEMPORAL_API_KEY goes out as the Authorization header.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { randomBytes, randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type RunningWorker } from '../../activities/worker.js';
import { TemporalClientHolder } from '../../api/temporal/client.js';
import { loadConfig } from '../../core/config.js';
import { createDb, type Db } from '../../core/db/knex.js';
import { createLogger } from '../../core/logger.js';
import { temporalConnectionOptions } from '../../core/temporal/connection-options.js';
import { temporalSettings } from '../../temporal.config.js';
import { createTestActivities } from '../fixtures/test-activities.js';
import { addEntryUpdate, closeUpdate, ledgerWorkflow } from '../fixtures/workflows/index.js';
import { databaseUrl, noTemporal, temporalAddress } from '../helpers/services.js';
import { createTestPki, SERVER_NAME, type TestPki } from '../helpers/test-pki.js';
import { startTlsProxy, type TlsProxy } from '../helpers/tls-proxy.js';

const require = createRequire(import.meta.url);

describe.skipIf(noTemporal())('Temporal over mTLS', () => {
  let pki: TestPki;
  let proxy: TlsProxy;
  let db: Db;
  let worker: RunningWorker | undefined;
  const holders: TemporalClientHolder[] = [];

  beforeAll(async () => {
    pki = createTestPki();
    const [host, port] = temporalAddress()!.split(':');
    proxy = await startTlsProxy({
      target: { host: host!, port: Number(port) },
      cert: pki.server.cert,
      key: pki.server.key,
      ca: pki.ca.cert,
      protocol: 'h2',
    });
    db = createDb(databaseUrl());
  });

  afterAll(async () => {
    await worker?.shutdown();
    await Promise.all(holders.map((h) => h.close()));
    await proxy?.close();
    await db?.destroy();
    pki?.remove();
  });

  /** The environment an operator would set: CA and certificate as files, the key inline. */
  const configWith = (tls: Record<string, string | undefined> = {}) =>
    loadConfig({
      DATABASE_URL: databaseUrl(),
      TEMPORAL_ADDRESS: proxy.address,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
      TEMPORAL_TLS_CA: pki.ca.certFile,
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
      TEMPORAL_TLS_CERT: pki.client.certFile,
      TEMPORAL_TLS_KEY: pki.client.key,
      ...tls,
    });

  const apiClient = (config: ReturnType<typeof configWith>) => {
    const holder = new TemporalClientHolder(temporalSettings(config), temporalConnectionOptions(config));
    holders.push(holder);
    return holder;
  };

  it('the worker and the api client connect with the client certificate and run a workflow', async () => {
    const config = configWith();
    const taskQueue = `tls-${randomUUID()}`;
    worker = await startWorker(config, createLogger('warn'), db, {
      taskQueue,
      workflowsPath: require.resolve('../fixtures/workflows/index.ts'),
      activities: createTestActivities(db),
    });
    const api = apiClient(config);
    await api.check(10_000);

    const [project] = (await db('projects')
      .insert({ name: `tls-${randomUUID()}` })
      .returning('*')) as Array<{ id: string }>;
    const workflowId = `ledger/${project!.id}`;
    const count = await api.client.workflow.executeUpdateWithStart(addEntryUpdate, {
      args: ['over mTLS'],
      startWorkflowOperation: new WithStartWorkflowOperation(ledgerWorkflow, {
        workflowId,
        taskQueue,
        args: [project!.id],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    });
    expect(count).toBe(1);
    const handle = api.client.workflow.getHandle(workflowId);
    await handle.executeUpdate(closeUpdate);
    expect(await handle.result()).toBe(1);
    // Every connection that got through presented our client certificate.
    expect(proxy.accepted.length).toBeGreaterThanOrEqual(2);
    expect(new Set(proxy.accepted)).toEqual(new Set(['client']));
  });

  /** The error each side gets: the api client's readiness check and the worker's connection. */
  async function refusals(config: ReturnType<typeof configWith>): Promise<{ api: string; worker: string }> {
    const api = await apiClient(config)
      .check(5_000)
      .then(
        () => 'connected',
        (err: unknown) => (err as Error).message,
      );
    const worker = await NativeConnection.connect(temporalConnectionOptions(config)).then(
      async (c) => {
        await c.close();
        return 'connected';
      },
      (err: unknown) => (err as Error).message,
    );
    return { api, worker };
  }

  it('without a client certificate both are refused, saying the server wants one', async () => {
    const refusedBefore = proxy.refused.length;
    const { api, worker } = await refusals(
      configWith({ TEMPORAL_TLS_CERT: undefined, TEMPORAL_TLS_KEY: undefined }),
    );
    // Not retried into a bare DEADLINE_EXCEEDED (api/temporal/retry.ts): readiness shows this reason.
    expect(api).toMatch(
      /^14 UNAVAILABLE: No connection established\. Last error: .*alert certificate required/,
    );
    // TLS 1.3: the server's alert can lose the race with the client's first write, which
    // then sees a broken pipe or a closed connection; the proxy's log below says why either way.
    expect(worker).toMatch(/fatal alert: CertificateRequired|broken pipe|connection closed/);
    expect(proxy.refused.slice(refusedBefore).join('\n')).toMatch(/peer did not return a certificate/);
  });

  it('refuses a certificate from another CA, and the client refuses a server its CA did not sign', async () => {
    const stranger = await refusals(
      configWith({
        TEMPORAL_TLS_CERT: pki.strangerClient.certFile,
        TEMPORAL_TLS_KEY: pki.strangerClient.keyFile,
      }),
    );
    // Node's TLS server closes on a certificate it does not trust (a real cluster sends "bad certificate").
    expect(stranger.api).not.toBe('connected');
    expect(stranger.worker).not.toBe('connected');
    expect(proxy.accepted).not.toContain('stranger-client');

    const wrongCa = await refusals(configWith({ TEMPORAL_TLS_CA: pki.otherCa.certFile }));
    expect(wrongCa.api).toMatch(/Last error: .*certificate/);
    expect(wrongCa.worker).toMatch(/InvalidCertificate\(UnknownIssuer\)/);
  });
});

describe('TEMPORAL_API_KEY', () => {
  let pki: TestPki;
  let server: http2.Http2SecureServer;
  const authorizations: Array<string | undefined> = [];

  beforeAll(async () => {
    pki = createTestPki();
    // Enough of a gRPC endpoint to see the request headers: every call is answered UNAUTHENTICATED.
    server = http2.createSecureServer({ cert: pki.server.cert, key: pki.server.key, allowHTTP1: false });
    server.on('stream', (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
      authorizations.push(headers.authorization);
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '16', 'grpc-message': 'test' }));
      stream.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    pki?.remove();
  });

  it('goes to Temporal as a bearer token over TLS, from the api client and the worker', async () => {
    const config = loadConfig({
      TEMPORAL_ADDRESS: `127.0.0.1:${(server.address() as AddressInfo).port}`,
      TEMPORAL_API_KEY: 'tcloud-test-key',
      TEMPORAL_TLS_CA: pki.ca.cert,
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
    });
    const holder = new TemporalClientHolder(temporalSettings(config), temporalConnectionOptions(config));
    await expect(holder.check(5_000)).rejects.toThrow();
    await holder.close();
    await expect(NativeConnection.connect(temporalConnectionOptions(config))).rejects.toThrow();
    expect(authorizations.length).toBeGreaterThanOrEqual(2);
    expect(new Set(authorizations)).toEqual(new Set(['Bearer tcloud-test-key']));
  });
});
