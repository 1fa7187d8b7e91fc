import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { deleteInChunks } from '../db/prune.js';
import {
  RunWebhooksTableName,
  WebhookDeliveriesTableName,
  WebhooksTableName,
  type DbRunWebhook,
  type DbRunWebhookInsert,
  type DbWebhook,
  type DbWebhookDelivery,
  type DbWebhookDeliveryInsert,
  type DbWebhookInsert,
  type DbWebhookUpdate,
  type WebhookAttempt,
  type WebhookDeliveryStatus,
} from '../db/tables/index.js';
import type { Page } from './types.js';

const newestFirst = [
  { column: 'created_at', order: 'desc' },
  { column: 'id', order: 'desc' },
] as const;

/** Webhooks, the one-off URLs of runs, and deliveries with their attempts. Knex only. */
export class WebhooksRepository {
  constructor(readonly db: Db) {}

  async insert(row: DbWebhookInsert): Promise<DbWebhook> {
    const [created] = await this.db(WebhooksTableName).insert(row).returning('*');
    return created!;
  }

  list(projectId: string, page: Page): Promise<DbWebhook[]> {
    return this.db(WebhooksTableName)
      .where({ project_id: projectId })
      .orderBy([...newestFirst])
      .limit(page.limit)
      .offset(page.offset);
  }

  findById(id: string): Promise<DbWebhook | undefined> {
    return this.db(WebhooksTableName).where({ id }).first();
  }

  async update(id: string, patch: DbWebhookUpdate): Promise<DbWebhook | undefined> {
    const [row] = await this.db(WebhooksTableName)
      .where({ id })
      .update({ ...patch, updated_at: this.db.fn.now() })
      .returning('*');
    return row;
  }

  async delete(id: string): Promise<void> {
    await this.db(WebhooksTableName).where({ id }).delete();
  }

  /** The project's enabled webhooks subscribed to `type`. */
  subscribed(projectId: string, type: string, q: Knex = this.db): Promise<DbWebhook[]> {
    return q(WebhooksTableName)
      .where({ project_id: projectId, enabled: true })
      .whereRaw('events @> ?::jsonb', [JSON.stringify([type])]);
  }

  async insertRunWebhook(row: DbRunWebhookInsert): Promise<void> {
    await this.db(RunWebhooksTableName).insert(row).onConflict('run_id').ignore();
  }

  findRunWebhook(runId: string, q: Knex = this.db): Promise<DbRunWebhook | undefined> {
    return q(RunWebhooksTableName).where({ run_id: runId }).first();
  }

  /** Inserts what is not there yet (unique by target and event key); a repeated event inserts nothing. */
  async insertDeliveries(rows: DbWebhookDeliveryInsert[], q: Knex = this.db): Promise<void> {
    if (rows.length === 0) return;
    await q(WebhookDeliveriesTableName).insert(rows).onConflict().ignore();
  }

  /** The deliveries of one event of a run not yet attempted: those whose sending may not have started. */
  unattempted(runId: string, eventKey: string, q: Knex = this.db): Promise<DbWebhookDelivery[]> {
    return q(WebhookDeliveriesTableName)
      .where({ run_id: runId, event_key: eventKey, status: 'pending' })
      .whereRaw(`attempts = '[]'::jsonb`);
  }

  /** The deliveries of one project event (no run: an eval, a budget) not yet attempted. */
  unattemptedEvent(projectId: string, eventKey: string, q: Knex = this.db): Promise<DbWebhookDelivery[]> {
    return q(WebhookDeliveriesTableName)
      .where({ project_id: projectId, event_key: eventKey, status: 'pending' })
      .whereNull('run_id')
      .whereRaw(`attempts = '[]'::jsonb`);
  }

  findDelivery(id: string): Promise<DbWebhookDelivery | undefined> {
    return this.db(WebhookDeliveriesTableName).where({ id }).first();
  }

  listDeliveries(webhookId: string, page: Page): Promise<DbWebhookDelivery[]> {
    return this.db(WebhookDeliveriesTableName)
      .where({ webhook_id: webhookId })
      .orderBy([...newestFirst])
      .limit(page.limit)
      .offset(page.offset);
  }

  /** A run's deliveries (to webhooks and to its one-off URL), newest first. */
  listRunDeliveries(runId: string, page: Page): Promise<DbWebhookDelivery[]> {
    return this.db(WebhookDeliveriesTableName)
      .where({ run_id: runId })
      .orderBy([...newestFirst])
      .limit(page.limit)
      .offset(page.offset);
  }

  /** The run's project, when the run exists. */
  runProject(runId: string): Promise<{ project_id: string } | undefined> {
    return this.db('runs').where({ id: runId }).first('project_id');
  }

  /**
   * Deletes deliveries that ended (delivered or failed) more than
   * `retentionDays` ago, in chunks, one replica at a time. A pending one stays
   * whatever its age: its workflow is still attempting it.
   */
  prune(retentionDays: number, chunk = 10_000): Promise<number> {
    const cutoff = new Date(Date.now() - retentionDays * 86_400_000);
    return deleteInChunks(
      this.db,
      'agent-server:prune-webhook-deliveries',
      `delete from webhook_deliveries where id in (
         select id from webhook_deliveries where status <> 'pending' and updated_at < ? limit ?)`,
      [cutoff],
      chunk,
    );
  }

  /** One more attempt (made to `url`), and the delivery's status after it. */
  async recordAttempt(
    id: string,
    url: string,
    attempt: WebhookAttempt,
    status: WebhookDeliveryStatus,
  ): Promise<void> {
    await this.db(WebhookDeliveriesTableName)
      .where({ id })
      .update({
        status,
        url,
        attempts: this.db.raw('attempts || ?::jsonb', [JSON.stringify([attempt])]),
        updated_at: this.db.fn.now(),
      });
  }

  async setStatus(id: string, status: WebhookDeliveryStatus): Promise<void> {
    await this.db(WebhookDeliveriesTableName).where({ id }).update({ status, updated_at: this.db.fn.now() });
  }
}
