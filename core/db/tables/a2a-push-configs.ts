import type { Knex } from 'knex';

export const A2aPushConfigsTableName = 'a2a_push_configs';

/** Where an A2A task's updates are pushed: the client's URL, token and authentication. */
export type DbA2aPushConfig = {
  /** Ours (deliveries point at it); `id` is the config's A2A id, unique per task. */
  pk: string;
  id: string;
  run_id: string;
  project_id: string;
  url: string;
  /** The client's token (sent as X-A2A-Notification-Token), encrypted with SECRETS_KEY. */
  token_enc: string | null;
  /** Sent as `Authorization: <auth_scheme> <credentials>`. */
  auth_scheme: string | null;
  credentials_enc: string | null;
  created_at: Date;
};
export type DbA2aPushConfigInsert = Omit<DbA2aPushConfig, 'pk' | 'created_at'>;

export type A2aPushConfigsTable = Knex.CompositeTableType<DbA2aPushConfig, DbA2aPushConfigInsert, never>;
