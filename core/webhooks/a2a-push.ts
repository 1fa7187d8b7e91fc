/**
 * A2A push notifications as webhook deliveries: one per push config of the
 * task (run), its body the task as GetTask answers it, in A2A's
 * StreamResponse shape (`{"task": {...}}`), sent with the client's token and
 * authentication instead of our signature (activities/webhooks/delivery.ts).
 */
import { StreamResponse } from '@a2a-js/sdk';
import { toTask } from '../a2a/task-view.js';
import type { Config } from '../config.js';
import type { SecretBox } from '../crypto/secrets.js';
import type { Db } from '../db/knex.js';
import type { DbA2aPushConfig, DbWebhookDeliveryInsert } from '../db/tables/index.js';
import { A2aPushConfigsRepository } from '../repositories/a2a-push-configs.repository.js';
import { A2aTasksRepository } from '../repositories/a2a-tasks.repository.js';
import type { RunViewRow } from '../repositories/runs.repository.js';
import { toRunView } from '../runs/run-view.js';

/** The media type of an A2A push body. */
export const A2A_PUSH_CONTENT_TYPE = 'application/a2a+json';
export const A2A_TOKEN_HEADER = 'X-A2A-Notification-Token';

type DeliveryBase = Pick<DbWebhookDeliveryInsert, 'project_id' | 'run_id' | 'event_type' | 'event_key'>;

/** The deliveries of the run's event to its push configs (none unless it is an A2A task with some). */
export async function pushDeliveries(
  db: Db,
  config: Config,
  row: RunViewRow,
  base: DeliveryBase,
): Promise<DbWebhookDeliveryInsert[]> {
  const configs = await new A2aPushConfigsRepository(db).forRun(row.id);
  if (configs.length === 0) return [];
  const users = await new A2aTasksRepository(db).userMessages([row.id]);
  const task = toTask(toRunView(row, config), users.get(row.id));
  const payload = JSON.stringify(StreamResponse.toJSON({ payload: { $case: 'task', value: task } }));
  return configs.map((c) => ({ ...base, webhook_id: null, push_config_id: c.pk, url: c.url, payload }));
}

/** The headers a push carries: the client's token, and its authentication as `Authorization`. */
export function pushHeaders(box: SecretBox, c: DbA2aPushConfig): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': A2A_PUSH_CONTENT_TYPE };
  if (c.token_enc) headers[A2A_TOKEN_HEADER] = box.decrypt(c.token_enc);
  if (c.auth_scheme && c.credentials_enc)
    headers.authorization = `${c.auth_scheme} ${box.decrypt(c.credentials_enc)}`;
  return headers;
}
