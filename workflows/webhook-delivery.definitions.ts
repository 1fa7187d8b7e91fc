/**
 * The contract of the workflow that sends one webhook delivery: its type
 * name, id and input live in core/webhooks/delivery-start.ts (the worker and
 * the API both start it); re-exported here for workflow code, as types.
 */
export type { WebhookDeliveryInput } from '../core/webhooks/delivery-start.js';

export type WebhookDeliveryResult = 'delivered' | 'failed' | 'stopped';
