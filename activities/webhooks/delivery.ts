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

  /** The secret the delivery is signed with: its webhook's, or the one made for its run's one-off URL. */
  async function secretOf(delivery: { webhook_id: string | null; run_id: string | null }) {
    if (delivery.webhook_id) {
      const hook = await hooks.findById(delivery.webhook_id);
      return hook?.enabled ? deps.secrets.decrypt(hook.secret_enc) : undefined;
    }
    const oneOff = delivery.run_id ? await hooks.findRunWebhook(delivery.run_id) : undefined;
    return oneOff ? deps.secrets.decrypt(oneOff.secret_enc) : undefined;
  }

  return {
    async attemptWebhookDelivery(args: { deliveryId: string; timeoutMs: number }): Promise<AttemptOutcome> {
      const delivery = await hooks.findDelivery(args.deliveryId);
      if (!delivery || delivery.status === 'delivered') return 'stopped';
      const secret = await secretOf(delivery);
      if (!secret) {
        await hooks.setStatus(delivery.id, 'failed');
        return 'stopped';
      }
      const headers = signedHeaders(secret, delivery.id, delivery.payload);
      const attempt = await sendWebhook(delivery.url, headers, delivery.payload, args.timeoutMs);
      const delivered = attempt.error === null;
      await hooks.recordAttempt(delivery.id, attempt, delivered ? 'delivered' : 'pending');
      if (!delivered)
        deps.logger.info(
          { deliveryId: delivery.id, url: delivery.url, error: attempt.error },
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
