import { Client, Connection } from '@temporalio/client';
import type { TemporalSettings } from '../../temporal.config.js';
import { temporalClientInterceptors } from '../telemetry/temporal.js';

/**
 * One lazily-connected Temporal client per process: the API starts (and can
 * report "temporal down" on readiness) even while Temporal is unreachable.
 */
export class TemporalClientHolder {
  readonly connection: Connection;
  readonly client: Client;

  constructor(readonly settings: TemporalSettings) {
    this.connection = Connection.lazy({ address: settings.address, connectTimeout: '3s' });
    this.client = new Client({
      connection: this.connection,
      namespace: settings.namespace,
      interceptors: temporalClientInterceptors(),
    });
  }

  /** Cheap round trip used by readiness. */
  async check(timeoutMs = 2_000): Promise<void> {
    await this.connection.withDeadline(Date.now() + timeoutMs, () =>
      this.connection.workflowService.describeNamespace({ namespace: this.settings.namespace }),
    );
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
