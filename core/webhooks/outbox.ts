/**
 * Deliveries written when an event happens (an outbox): one row per target,
 * unique by target and event, so an activity retried after writing them
 * writes nothing more. The body is fixed here, once: every attempt and
 * redelivery sends the same bytes under the same `webhook-id`.
 */
import type { Config } from '../config.js';
import type { Db } from '../db/knex.js';
import type { DbWebhookDelivery, DbWebhookDeliveryInsert, RunStatus } from '../db/tables/index.js';
import { RunsRepository } from '../repositories/runs.repository.js';
import { WebhooksRepository } from '../repositories/webhooks.repository.js';
import { toRunView } from '../runs/run-view.js';
import { pushDeliveries } from './a2a-push.js';
import type { WebhookEventType, WebhookPayload } from './events.js';

export type RunWebhookEvent = Extract<WebhookEventType, `run.${string}`>;

/** The event a run's status announces, if any. */
export function runEventOf(status: RunStatus): RunWebhookEvent | undefined {
  switch (status) {
    case 'completed':
      return 'run.completed';
    case 'failed':
      return 'run.failed';
    case 'cancelled':
      return 'run.cancelled';
    case 'awaiting_approval':
    case 'awaiting_budget':
    case 'awaiting_decision':
    case 'awaiting_authorization':
    case 'awaiting_input':
      return 'run.paused';
    default:
      return undefined;
  }
}

/**
 * The deliveries of a run's event (`key` tells its pauses apart): the
 * project's enabled webhooks subscribed to it, the run's one-off URL, and
 * the push configs of an A2A task (their body is the A2A task).
 * Returns those not attempted yet, to be started.
 */
export async function recordRunDeliveries(
  db: Db,
  config: Config,
  runId: string,
  type: RunWebhookEvent,
  key: string,
): Promise<DbWebhookDelivery[]> {
  const hooks = new WebhooksRepository(db);
  const row = await new RunsRepository(db).findView(runId);
  // Only what the run's status says now: a retried close of a run cancelled meanwhile announces no completion.
  if (!row || runEventOf(row.status) !== type) return [];
  const eventKey = `${runId}/${type}/${key}`;
  const base = { project_id: row.project_id, run_id: runId, event_type: type, event_key: eventKey };
  const [subscribed, oneOff, pushes] = await Promise.all([
    hooks.subscribed(row.project_id, type),
    hooks.findRunWebhook(runId),
    pushDeliveries(db, config, row, base),
  ]);
  if (subscribed.length === 0 && !oneOff && pushes.length === 0) return [];
  const payload: WebhookPayload = { type, timestamp: new Date().toISOString(), data: toRunView(row, config) };
  const body = JSON.stringify(payload);
  const rows: DbWebhookDeliveryInsert[] = subscribed.map((w) => ({
    ...base,
    webhook_id: w.id,
    url: w.url,
    payload: body,
  }));
  if (oneOff) rows.push({ ...base, webhook_id: null, url: oneOff.url, payload: body });
  rows.push(...pushes);
  await hooks.insertDeliveries(rows);
  return hooks.unattempted(runId, eventKey);
}

export type ProjectWebhookEvent = Exclude<WebhookEventType, RunWebhookEvent>;

/**
 * The deliveries of an event that is not a run's (`eval.completed`,
 * `budget.threshold`): the project's enabled webhooks subscribed to it.
 * `eventKey` names the event once (an eval's id, a budget's period), so a
 * retried caller records nothing twice. Returns those not attempted yet.
 */
export async function recordProjectDeliveries(
  db: Db,
  projectId: string,
  type: ProjectWebhookEvent,
  eventKey: string,
  data: unknown,
): Promise<DbWebhookDelivery[]> {
  const hooks = new WebhooksRepository(db);
  const subscribed = await hooks.subscribed(projectId, type);
  if (subscribed.length === 0) return [];
  const payload: WebhookPayload = { type, timestamp: new Date().toISOString(), data };
  const body = JSON.stringify(payload);
  const key = `${type}/${eventKey}`;
  await hooks.insertDeliveries(
    subscribed.map((w) => ({
      project_id: projectId,
      run_id: null,
      event_type: type,
      event_key: key,
      webhook_id: w.id,
      url: w.url,
      payload: body,
    })),
  );
  return hooks.unattemptedEvent(projectId, key);
}
