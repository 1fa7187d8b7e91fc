/**
 * Starting the workflow that sends one delivery (workflows/webhook-delivery.workflow.ts),
 * for the worker (a new event) and the API (a redelivery) alike. Its id is
 * the delivery's, so a delivery is never sent by two workflows at once.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Config } from '../config.js';

/** The workflow function's name (workflows/index.ts exports it under this name). */
export const WEBHOOK_DELIVERY_WORKFLOW_TYPE = 'webhookDeliveryWorkflow';

export const webhookDeliveryWorkflowId = (deliveryId: string) => `webhook-delivery/${deliveryId}`;

export interface WebhookDeliveryInput {
  deliveryId: string;
  /** The wait before the first retry, doubling up to retryMaxMs. */
  retryInitialMs: number;
  retryMaxMs: number;
  /** Epoch milliseconds: no attempt starts after this; the delivery has then failed. */
  expireAt: number;
  /** One attempt's limit. */
  attemptTimeoutMs: number;
}

export function deliveryInput(config: Config, deliveryId: string, from: Date): WebhookDeliveryInput {
  const w = config.webhooks;
  return {
    deliveryId,
    retryInitialMs: w.retryInitialMs,
    retryMaxMs: w.retryMaxMs,
    expireAt: from.getTime() + w.expireMs,
    attemptTimeoutMs: w.timeoutMs,
  };
}

/**
 * Starts sending. A first start (`again` false) never repeats a sending that
 * already ran (REJECT_DUPLICATE), so a retried activity sends nothing twice;
 * a redelivery (`again`) may follow a finished one. Either way a sending
 * under way is left alone: 'running'.
 */
export async function startWebhookDelivery(
  client: Client,
  config: Config,
  input: WebhookDeliveryInput,
  again = false,
): Promise<'started' | 'running'> {
  try {
    await client.workflow.start(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
      workflowId: webhookDeliveryWorkflowId(input.deliveryId),
      taskQueue: config.temporalTaskQueue,
      args: [input],
      workflowIdReusePolicy: again ? 'ALLOW_DUPLICATE' : 'REJECT_DUPLICATE',
    });
    return 'started';
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return 'running';
    throw err;
  }
}
