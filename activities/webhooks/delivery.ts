/**
 * The steps of sending a delivery (workflows/webhook-delivery.workflow.ts):
 * one attempt, signed and sent through the egress policy, recorded on the
 * delivery whatever its outcome; and giving up once it has expired.
 */
import type { SecretBox } from '../../core/crypto/secrets.js';
import type { Db } from '../../core/db/knex.js';
import type { Logger } from '../../core/logger.js';
import { WebhooksRepository } from '../../core/repositories/webhooks.repository.js';
import { sendWebhook } from '../../core/webhooks/send.js';
import { signedHeaders } from '../../core/webhooks/signing.js';

export interface WebhookDeliveryDeps {
  db: Db;
  logger: Logger;
  secrets: SecretBox;
}

/** `stopped`: nothing more to send (delivered meanwhile, or its webhook deleted or disabled). */
export type AttemptOutcome = 'delivered' | 'failed' | 'stopped';

export function createWebhookDeliveryActivities(deps: WebhookDeliveryDeps) {
  const hooks = new WebhooksRepository(deps.db);

  /**
   * Where the delivery goes and the secret it is signed with: its webhook's
   * as they are now (a URL corrected meanwhile is used at the next attempt),
   * or its run's one-off URL and the secret made for it.
   */
  async function targetOf(delivery: {
    webhook_id: string | null;
    run_id: string | null;
  }): Promise<{ url: string; secret: string } | undefined> {
    if (delivery.webhook_id) {
      const hook = await hooks.findById(delivery.webhook_id);
      return hook?.enabled ? { url: hook.url, secret: deps.secrets.decrypt(hook.secret_enc) } : undefined;
    }
    const oneOff = delivery.run_id ? await hooks.findRunWebhook(delivery.run_id) : undefined;
    return oneOff ? { url: oneOff.url, secret: deps.secrets.decrypt(oneOff.secret_enc) } : undefined;
  }

  return {
    async attemptWebhookDelivery(args: { deliveryId: string; timeoutMs: number }): Promise<AttemptOutcome> {
      const delivery = await hooks.findDelivery(args.deliveryId);
      if (!delivery || delivery.status === 'delivered') return 'stopped';
      const target = await targetOf(delivery);
      if (!target) {
        await hooks.setStatus(delivery.id, 'failed');
        return 'stopped';
      }
      const headers = signedHeaders(target.secret, delivery.id, delivery.payload);
      const attempt = await sendWebhook(target.url, headers, delivery.payload, args.timeoutMs);
      const delivered = attempt.error === null;
      await hooks.recordAttempt(delivery.id, target.url, attempt, delivered ? 'delivered' : 'pending');
      if (!delivered)
        deps.logger.info(
          { deliveryId: delivery.id, url: target.url, error: attempt.error },
          'webhook delivery attempt failed',
        );
      return delivered ? 'delivered' : 'failed';
    },

    /** No acknowledgement before the delivery expired: it has failed (a redelivery may still send it). */
    async expireWebhookDelivery(args: { deliveryId: string }): Promise<void> {
      await hooks.setStatus(args.deliveryId, 'failed');
    },
  };
}

export type WebhookDeliveryActivities = ReturnType<typeof createWebhookDeliveryActivities>;
