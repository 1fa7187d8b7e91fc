import Joi from 'joi';
import { WEBHOOK_EVENTS, type WebhookEventType } from '../../core/webhooks/events.js';
import type { WebhookAttempt, WebhookDeliveryStatus } from '../../core/db/tables/index.js';
import {
  idParams,
  optionalProjectQuery,
  pagination,
  projectQuery,
  timestamp,
  uuid,
} from './common.schemas.js';

/** An endpoint: http(s) only, at most 2048 characters. */
export const webhookUrl = Joi.string()
  .max(2048)
  .uri({ scheme: ['http', 'https'] })
  .messages({ 'string.uriCustomScheme': '{{#label}} must be an http or https URL' })
  .description('Where deliveries are POSTed; sent through the egress policy (EGRESS_ALLOW / EGRESS_DENY)');

const events = Joi.array()
  .items(Joi.string().valid(...WEBHOOK_EVENTS))
  .min(1)
  .unique()
  .description(`The events delivered: one or more of ${WEBHOOK_EVENTS.join(', ')}`);

const scopeQuery = Joi.object({ ...optionalProjectQuery });

export const webhookCreate = {
  query: Joi.object({ ...projectQuery }),
  body: Joi.object({
    url: webhookUrl.required(),
    events: events.required(),
    enabled: Joi.boolean().default(true).description('A disabled webhook receives nothing'),
  }).required(),
};

export const webhookList = { query: Joi.object({ ...projectQuery, ...pagination }) };
export const webhookGet = { params: idParams, query: scopeQuery };
export const webhookUpdate = {
  params: idParams,
  query: scopeQuery,
  body: Joi.object({ url: webhookUrl, events, enabled: Joi.boolean() }).min(1).required(),
};
export const webhookDelete = { params: idParams, query: scopeQuery };
export const deliveryList = {
  params: idParams,
  query: Joi.object({ ...optionalProjectQuery, ...pagination }),
};
export const deliveryRedeliver = {
  params: Joi.object({ id: uuid.required(), delivery_id: uuid.required() }),
  query: scopeQuery,
};

export const runDeliveryList = {
  params: Joi.object({ run_id: uuid.required() }),
  query: Joi.object({ ...optionalProjectQuery, ...pagination }),
};
export const runDeliveryRedeliver = {
  params: Joi.object({ run_id: uuid.required(), delivery_id: uuid.required() }),
  query: scopeQuery,
};

export interface WebhookCreateBody {
  url: string;
  events: WebhookEventType[];
  enabled: boolean;
}
export type WebhookUpdateBody = Partial<WebhookCreateBody>;

/** What the API returns for a webhook; `secret` only in the create response. */
export interface Webhook {
  id: string;
  project_id: string;
  url: string;
  events: string[];
  enabled: boolean;
  created_at: string;
  updated_at: string;
}
export type WebhookWithSecret = Webhook & { secret: string };

export interface WebhookDelivery {
  id: string;
  webhook_id: string | null;
  run_id: string | null;
  event_type: string;
  url: string;
  status: WebhookDeliveryStatus;
  attempts: WebhookAttempt[];
  payload: unknown;
  created_at: string;
  updated_at: string;
}

export const webhookResponse = Joi.object({
  id: uuid,
  project_id: uuid,
  url: Joi.string(),
  events: Joi.array().items(Joi.string()),
  enabled: Joi.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});
export const webhookWithSecretResponse = webhookResponse.keys({
  secret: Joi.string().description(
    'Shown once: `whsec_` + base64 of 32 random bytes (the HMAC-SHA256 key is the decoded bytes), for verifying `webhook-signature` (Standard Webhooks)',
  ),
});
export const webhookListResponse = Joi.array().items(webhookResponse);

const attemptResponse = Joi.object({
  at: timestamp,
  status_code: Joi.number().integer().allow(null).description("The endpoint's HTTP status; null: no answer"),
  error: Joi.string()
    .allow(null)
    .description(
      'Why the attempt failed (`HTTP 503`, `timeout`, `egress_denied: …`, `connection_failed: …`)',
    ),
  duration_ms: Joi.number().integer(),
});
export const deliveryResponse = Joi.object({
  id: uuid.description('Also the `webhook-id` header of every attempt (receivers deduplicate on it)'),
  webhook_id: uuid.allow(null),
  run_id: uuid.allow(null),
  event_type: Joi.string(),
  url: Joi.string(),
  status: Joi.string()
    .valid('pending', 'delivered', 'failed')
    .description('pending: being attempted; delivered: acknowledged (2xx); failed: expired unacknowledged'),
  attempts: Joi.array().items(attemptResponse),
  payload: Joi.object().unknown(true).description('The body sent: `{type, timestamp, data}`'),
  created_at: timestamp,
  updated_at: timestamp,
});
export const deliveryListResponse = Joi.array().items(deliveryResponse);
