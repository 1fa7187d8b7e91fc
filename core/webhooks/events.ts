/** The events a webhook may subscribe to. */
export const WEBHOOK_EVENTS = [
  'run.paused',
  'run.completed',
  'run.failed',
  'run.cancelled',
  'eval.completed',
  'budget.threshold',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** What a delivery's body is: `{type, timestamp, data}` (data: the run view, or the eval). */
export interface WebhookPayload {
  type: WebhookEventType;
  timestamp: string;
  data: unknown;
}
