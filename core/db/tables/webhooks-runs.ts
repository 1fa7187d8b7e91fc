import type { Knex } from 'knex';

export const RunWebhooksTableName = 'run_webhooks';

/** The one-off URL a converse request named for its run, with the secret made for that run. */
export type DbRunWebhook = {
  id: string;
  run_id: string;
  project_id: string;
  url: string;
  /** `whsec_…`, encrypted with SECRETS_KEY. */
  secret_enc: string;
  created_at: Date;
};
export type DbRunWebhookInsert = Pick<DbRunWebhook, 'run_id' | 'project_id' | 'url' | 'secret_enc'>;

export type RunWebhooksTable = Knex.CompositeTableType<DbRunWebhook, DbRunWebhookInsert, never>;
