/**
 * Announcing a run's events to webhooks, from the activities that write the
 * run's status, after the write: the deliveries are recorded (idempotently)
 * and their sending started. Called again by a retried activity, it records
 * nothing new and starts only what never started.
 *
 * The worker installs the emitter at start (it holds the worker's Temporal
 * client and configuration), so the session activities need no new
 * dependency; without one (activities run outside a worker) nothing is sent.
 */
import type { Client } from '@temporalio/client';
import type { Config } from '../../core/config.js';
import type { Db } from '../../core/db/knex.js';
import type { Logger } from '../../core/logger.js';
import { deliveryInput, startWebhookDelivery } from '../../core/webhooks/delivery-start.js';
import { recordRunDeliveries, runEventOf, type RunWebhookEvent } from '../../core/webhooks/outbox.js';

export { runEventOf };

interface Emitter {
  config: Config;
  logger: Logger;
  temporal: Client;
}

let emitter: Emitter | undefined;

/** Installs the worker's emitter; the function returned uninstalls it (if still the one installed). */
export function installRunWebhooks(installed: Emitter): () => void {
  emitter = installed;
  return () => {
    if (emitter === installed) emitter = undefined;
  };
}

/**
 * Records and starts the deliveries of the run's event. A failure to record
 * throws (the activity is retried, and records them then); a failure to
 * start is logged, not thrown: the turn must not fail for a webhook. Such a
 * delivery stays pending, listed without attempts, until redelivered.
 */
export async function emitRunWebhooks(
  db: Db,
  runId: string,
  type: RunWebhookEvent,
  key: string,
): Promise<void> {
  const e = emitter;
  if (!e) return;
  const deliveries = await recordRunDeliveries(db, e.config, runId, type, key);
  for (const d of deliveries) {
    try {
      await startWebhookDelivery(e.temporal, e.config, deliveryInput(e.config, d.id, d.created_at));
    } catch (err) {
      e.logger.error({ err, deliveryId: d.id, runId }, 'could not start a webhook delivery');
    }
  }
}
