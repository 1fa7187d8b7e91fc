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
import {
  recordProjectDeliveries,
  recordRunDeliveries,
  runEventOf,
  type ProjectWebhookEvent,
  type RunWebhookEvent,
} from '../../core/webhooks/outbox.js';
import type { DbWebhookDelivery } from '../../core/db/tables/index.js';

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
  await startAll(e, deliveries);
}

/**
 * Records and starts the deliveries of a project's event that is not a
 * run's (an eval completed, a budget crossing its threshold); `key` names
 * the event once. Failures behave as emitRunWebhooks's.
 */
export async function emitProjectWebhooks(
  db: Db,
  projectId: string,
  type: ProjectWebhookEvent,
  key: string,
  data: unknown,
): Promise<void> {
  const e = emitter;
  if (!e) return;
  await startAll(e, await recordProjectDeliveries(db, projectId, type, key, data));
}

async function startAll(e: Emitter, deliveries: DbWebhookDelivery[]): Promise<void> {
  for (const d of deliveries) {
    try {
      await startWebhookDelivery(e.temporal, e.config, deliveryInput(e.config, d.id, d.created_at));
    } catch (err) {
      e.logger.error({ err, deliveryId: d.id, runId: d.run_id }, 'could not start a webhook delivery');
    }
  }
}
