import { Client, Connection } from '@temporalio/client';
import type { TemporalSettings } from '../../temporal.config.js';
import { temporalClientInterceptors } from '../../core/telemetry/temporal.js';
import type { TemporalConnectionOptions } from '../../core/temporal/connection-options.js';
import { temporalClientRetryInterceptors } from './retry.js';

/**
 * One lazily-connected Temporal client per process: the API starts (and can
 * report "temporal down" on readiness) even while Temporal is unreachable.
 */
export class TemporalClientHolder {
  readonly connection: Connection;
  readonly client: Client;

  constructor(
    readonly settings: TemporalSettings,
    /** TLS and API key (core/temporal/connection-options.ts); the default is plaintext to settings.address. */
    connectionOptions: TemporalConnectionOptions = { address: settings.address, tls: false },
  ) {
    this.connection = Connection.lazy({
      ...connectionOptions,
      connectTimeout: '3s',
      interceptors: temporalClientRetryInterceptors(),
    });
    this.client = new Client({
      connection: this.connection,
      namespace: settings.namespace,
      interceptors: temporalClientInterceptors(),
    });
  }

  /** Readiness checks still running (their gRPC retries must not outlive the connection). */
  private readonly checks = new Set<Promise<unknown>>();

  /** Cheap round trip used by readiness. */
  async check(timeoutMs = 2_000): Promise<void> {
    const call = this.connection.withDeadline(Date.now() + timeoutMs, () =>
      this.connection.workflowService.describeNamespace({ namespace: this.settings.namespace }),
    );
    const tracked = call.catch(() => undefined);
    this.checks.add(tracked);
    void tracked.finally(() => this.checks.delete(tracked));
    await call;
  }

  /**
   * Waits for readiness checks still retrying against an unreachable server
   * (each is bounded by its deadline): closing under them would make their
   * next retry throw from a timer.
   */
  async close(): Promise<void> {
    await Promise.allSettled([...this.checks]);
    await this.connection.close();
  }
}
