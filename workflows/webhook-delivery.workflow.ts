import { proxyActivities, sleep } from '@temporalio/workflow';
import type { WebhookDeliveryActivities } from '../activities/webhooks/delivery.js';
import type { WebhookDeliveryInput, WebhookDeliveryResult } from './webhook-delivery.definitions.js';

/** An attempt records itself; only a failure to reach Postgres makes Temporal retry it. */
function activities(input: WebhookDeliveryInput) {
  return proxyActivities<WebhookDeliveryActivities>({
    startToCloseTimeout: input.attemptTimeoutMs + 30_000,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  });
}

/**
 * Sends one delivery until its endpoint acknowledges it (2xx) or it expires:
 * after each failed attempt it waits, the wait doubling from retryInitialMs
 * up to retryMaxMs; an attempt that could only start after `expireAt` is not
 * made, and the delivery has failed. Durable: the waits are Temporal timers.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  const { attemptWebhookDelivery, expireWebhookDelivery } = activities(input);
  let wait = input.retryInitialMs;
  for (;;) {
    const outcome = await attemptWebhookDelivery({
      deliveryId: input.deliveryId,
      timeoutMs: input.attemptTimeoutMs,
    });
    if (outcome !== 'failed') return outcome;
    if (Date.now() + wait > input.expireAt) {
      await expireWebhookDelivery({ deliveryId: input.deliveryId });
      return 'failed';
    }
    await sleep(wait);
    wait = Math.min(wait * 2, input.retryMaxMs);
  }
}
