import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import type { Config } from '../../core/config.js';
import type { SecretBox } from '../../core/crypto/secrets.js';
import type { DbWebhook, DbWebhookDelivery } from '../../core/db/tables/index.js';
import { ConflictError, NotFoundError } from '../../core/errors.js';
import type { WebhooksRepository } from '../../core/repositories/webhooks.repository.js';
import {
  deliveryInput,
  startWebhookDelivery,
  webhookDeliveryWorkflowId,
} from '../../core/webhooks/delivery-start.js';
import { newWebhookSecret } from '../../core/webhooks/signing.js';
import type { Page } from '../schemas/common.schemas.js';
import type {
  Webhook,
  WebhookCreateBody,
  WebhookDelivery,
  WebhookUpdateBody,
  WebhookWithSecret,
} from '../schemas/webhooks.schemas.js';
import { assertInProject, requireProject } from './project-scope.js';

/** How long a redelivery waits for the last round's workflow to close after it recorded its outcome. */
const REDELIVER_WAIT_MS = 5_000;

function toWebhook(row: DbWebhook): Webhook {
  return {
    id: row.id,
    project_id: row.project_id,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function toDelivery(row: DbWebhookDelivery): WebhookDelivery {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    run_id: row.run_id,
    event_type: row.event_type,
    url: row.url,
    status: row.status,
    attempts: row.attempts,
    payload: JSON.parse(row.payload) as unknown,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/**
 * A project's webhooks: the secret is made here, shown once in the create
 * answer, and stored encrypted (it must be read back to sign deliveries,
 * unlike a virtual key's, which is only compared).
 */
export class WebhooksService {
  constructor(
    private readonly hooks: WebhooksRepository,
    private readonly secrets: SecretBox,
    private readonly config: Config,
    /** The API's Temporal client, for redeliveries; connected on first use. */
    private readonly temporal: () => Client,
  ) {}

  async create(projectId: string, body: WebhookCreateBody): Promise<WebhookWithSecret> {
    await requireProject(this.hooks.db, projectId);
    const secret = newWebhookSecret();
    const row = await this.hooks.insert({
      project_id: projectId,
      url: body.url,
      events: JSON.stringify(body.events),
      enabled: body.enabled,
      secret_enc: this.secrets.encrypt(secret),
    });
    return { ...toWebhook(row), secret };
  }

  async list(projectId: string, page: Page): Promise<Webhook[]> {
    await requireProject(this.hooks.db, projectId);
    return (await this.hooks.list(projectId, page)).map(toWebhook);
  }

  private async find(id: string, projectId: string | undefined): Promise<DbWebhook> {
    const row = await this.hooks.findById(id);
    assertInProject(row, projectId, 'webhook');
    return row!;
  }

  async get(id: string, projectId: string | undefined): Promise<Webhook> {
    return toWebhook(await this.find(id, projectId));
  }

  async update(id: string, projectId: string | undefined, body: WebhookUpdateBody): Promise<Webhook> {
    await this.find(id, projectId);
    const row = await this.hooks.update(id, {
      ...(body.url !== undefined ? { url: body.url } : {}),
      ...(body.events !== undefined ? { events: JSON.stringify(body.events) } : {}),
      ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
    });
    if (!row) throw new NotFoundError('webhook');
    return toWebhook(row);
  }

  /** Its deliveries go with it; one being attempted stops at its next attempt. */
  async delete(id: string, projectId: string | undefined): Promise<void> {
    await this.find(id, projectId);
    await this.hooks.delete(id);
  }

  async deliveries(id: string, projectId: string | undefined, page: Page): Promise<WebhookDelivery[]> {
    await this.find(id, projectId);
    return (await this.hooks.listDeliveries(id, page)).map(toDelivery);
  }

  /**
   * Sends the delivery again, same body and `webhook-id`, with a new round
   * of attempts (and a new expiry). 409 while it is still being attempted
   * or while its webhook is disabled.
   */
  async redeliver(id: string, deliveryId: string, projectId: string | undefined): Promise<WebhookDelivery> {
    const hook = await this.find(id, projectId);
    const delivery = await this.hooks.findDelivery(deliveryId);
    if (!delivery || delivery.webhook_id !== id) throw new NotFoundError('delivery');
    if (!hook.enabled) throw new ConflictError({ field: 'enabled', reason: 'the webhook is disabled' });
    return this.resend(delivery);
  }

  /**
   * Every delivery of a run's events, newest first: to the project's
   * webhooks and to the run's one-off URL (`webhook_id` null).
   */
  async runDeliveries(runId: string, projectId: string | undefined, page: Page): Promise<WebhookDelivery[]> {
    await this.findRun(runId, projectId);
    return (await this.hooks.listRunDeliveries(runId, page)).map(toDelivery);
  }

  /** Sends one of the run's deliveries again (a one-off URL's too), as `redeliver` does. */
  async redeliverForRun(
    runId: string,
    deliveryId: string,
    projectId: string | undefined,
  ): Promise<WebhookDelivery> {
    await this.findRun(runId, projectId);
    const delivery = await this.hooks.findDelivery(deliveryId);
    if (!delivery || delivery.run_id !== runId) throw new NotFoundError('delivery');
    if (delivery.webhook_id) {
      const hook = await this.hooks.findById(delivery.webhook_id);
      if (hook && !hook.enabled)
        throw new ConflictError({ field: 'enabled', reason: 'the webhook is disabled' });
    }
    return this.resend(delivery);
  }

  private async findRun(runId: string, projectId: string | undefined): Promise<void> {
    const run = await this.hooks.runProject(runId);
    if (!run || (projectId !== undefined && run.project_id !== projectId)) throw new NotFoundError('run');
  }

  /**
   * The same body and `webhook-id` again, with a new round of attempts (and a
   * new expiry). 409 while it is still being attempted.
   */
  private async resend(delivery: DbWebhookDelivery): Promise<WebhookDelivery> {
    const deliveryId = delivery.id;
    if (delivery.status === 'pending')
      throw new ConflictError({ status: delivery.status, reason: 'the delivery is still being attempted' });
    // The last round records its outcome just before its workflow closes: let it close first.
    await this.previousRoundClosed(deliveryId);
    await this.hooks.setStatus(deliveryId, 'pending');
    const started = await startWebhookDelivery(
      this.temporal(),
      this.config,
      deliveryInput(this.config, deliveryId, new Date()),
      true,
    );
    if (started === 'running') {
      // Not ours to attempt: the round still running records the outcome, as it was.
      await this.hooks.setStatus(deliveryId, delivery.status);
      throw new ConflictError({ status: delivery.status, reason: 'the delivery is still being attempted' });
    }
    return toDelivery((await this.hooks.findDelivery(deliveryId))!);
  }

  /** Waits (up to REDELIVER_WAIT_MS) for the delivery's last workflow to close, once it has recorded its outcome. */
  private async previousRoundClosed(deliveryId: string): Promise<void> {
    const handle = this.temporal().workflow.getHandle(webhookDeliveryWorkflowId(deliveryId));
    const closed = handle.result().then(
      () => true,
      () => true, // failed, terminated, or never started: closed either way
    );
    await Promise.race([closed, sleep(REDELIVER_WAIT_MS)]);
  }
}
