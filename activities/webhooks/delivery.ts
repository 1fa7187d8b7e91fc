/**
 * The steps of sending a delivery (workflows/webhook-delivery.workflow.ts):
 * one attempt, signed and sent through the egress policy, recorded on the
 * delivery whatever its outcome; and giving up once it has expired.
 */
import type { SecretBox } from '../../core/crypto/secrets.js';
import type { Db } from '../../core/db/knex.js';
import type { Logger } from '../../core/logger.js';
import { A2aPushConfigsRepository } from '../../core/repositories/a2a-push-configs.repository.js';
import { WebhooksRepository } from '../../core/repositories/webhooks.repository.js';
import { pushHeaders } from '../../core/webhooks/a2a-push.js';
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
  const pushes = new A2aPushConfigsRepository(deps.db);

  /**
   * Where the delivery goes and its headers: signed with its webhook's secret
   * as they are now (a URL corrected meanwhile is used at the next attempt),
   * or its run's one-off URL's; an A2A push config's with its token.
   */
  async function targetOf(delivery: {
    id: string;
    payload: string;
    webhook_id: string | null;
    push_config_id: string | null;
    run_id: string | null;
  }): Promise<{ url: string; headers: Record<string, string> } | undefined> {
    const signed = (url: string, secret_enc: string) => ({
      url,
      headers: signedHeaders(deps.secrets.decrypt(secret_enc), delivery.id, delivery.payload),
    });
    if (delivery.webhook_id) {
      const hook = await hooks.findById(delivery.webhook_id);
      return hook?.enabled ? signed(hook.url, hook.secret_enc) : undefined;
    }
    // An A2A push: the client's token and authentication, not our signature.
    if (delivery.push_config_id) {
      const push = await pushes.findByPk(delivery.push_config_id);
      return push ? { url: push.url, headers: pushHeaders(deps.secrets, push) } : undefined;
    }
    const oneOff = delivery.run_id ? await hooks.findRunWebhook(delivery.run_id) : undefined;
    return oneOff ? signed(oneOff.url, oneOff.secret_enc) : undefined;
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
      const attempt = await sendWebhook(target.url, target.headers, delivery.payload, args.timeoutMs);
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
