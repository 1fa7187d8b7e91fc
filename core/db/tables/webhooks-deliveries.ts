import type { Knex } from 'knex';
import type { JsonText, Timestamp } from './columns.js';

export const WebhookDeliveriesTableName = 'webhook_deliveries';

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One try at sending a delivery. */
export type WebhookAttempt = {
  at: string;
  /** The endpoint's answer; null when none came (refused, unreachable, timed out). */
  status_code: number | null;
  /** Why the attempt failed (`egress_denied: …`, `timeout`, `HTTP 503`); null when acknowledged. */
  error: string | null;
  duration_ms: number;
};

/** One event for one endpoint: written when the event happens, sent until acknowledged or expired. */
export type DbWebhookDelivery = {
  id: string;
  project_id: string;
  /** null: the run's one-off URL, or an A2A push (push_config_id). */
  webhook_id: string | null;
  /** An A2A task's push config (a2a_push_configs.pk): sent with its token, not signed. */
  push_config_id: string | null;
  run_id: string | null;
  event_type: string;
  event_key: string;
  /** Where it was last sent (its webhook's URL at that attempt). */
  url: string;
  /** The exact body sent, `{type, timestamp, data}`. */
  payload: string;
  status: WebhookDeliveryStatus;
  attempts: WebhookAttempt[];
  created_at: Date;
  updated_at: Date;
};
export type DbWebhookDeliveryInsert = Pick<
  DbWebhookDelivery,
  'project_id' | 'webhook_id' | 'run_id' | 'event_type' | 'event_key' | 'url' | 'payload'
> & { push_config_id?: string | null };
export type DbWebhookDeliveryUpdate = {
  url?: string;
  status?: WebhookDeliveryStatus;
  attempts?: JsonText | Knex.Raw;
  updated_at?: Timestamp;
};

export type WebhookDeliveriesTable = Knex.CompositeTableType<
  DbWebhookDelivery,
  DbWebhookDeliveryInsert,
  DbWebhookDeliveryUpdate
>;
