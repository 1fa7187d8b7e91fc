import type { Knex } from 'knex';
import type { JsonText, Timestamp } from './columns.js';

export const WebhooksTableName = 'webhooks';

/** An endpoint of a project that receives the events it names. */
export type DbWebhook = {
  id: string;
  project_id: string;
  url: string;
  /** Event types (core/webhooks/events.ts WEBHOOK_EVENTS). */
  events: string[];
  enabled: boolean;
  /** `whsec_…`, encrypted with SECRETS_KEY. */
  secret_enc: string;
  created_at: Date;
  updated_at: Date;
};
export type DbWebhookInsert = Pick<DbWebhook, 'project_id' | 'url' | 'secret_enc'> & {
  events: JsonText;
  enabled?: boolean;
};
export type DbWebhookUpdate = Partial<Pick<DbWebhook, 'url' | 'enabled'>> & {
  events?: JsonText;
  updated_at?: Timestamp;
};

export type WebhooksTable = Knex.CompositeTableType<DbWebhook, DbWebhookInsert, DbWebhookUpdate>;
