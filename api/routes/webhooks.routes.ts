import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import { WebhooksRepository } from '../../core/repositories/webhooks.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/webhooks.schemas.js';
import { WebhooksService } from '../services/webhooks.service.js';

type Id = { id: string };
type ProjectQ = { project_id: string };
type ScopeQ = { project_id?: string };

export function webhookRoutes(deps: AppDeps): ApiRouter[] {
  const hooks = new WebhooksService(
    new WebhooksRepository(deps.db),
    deps.secrets,
    deps.config,
    () => deps.temporal.client,
  );
  const byWebhook = new ApiRouter('/api/agent-server/webhooks', 'Webhooks')
    .access({ read: 'project:read', write: 'project:develop', project: { table: 'webhooks' } })
    .route<Validated<never, ProjectQ, s.WebhookCreateBody>>(
      {
        method: 'post',
        path: '/',
        summary: 'Register a webhook',
        description:
          '`secret` is returned in this response only (stored encrypted). Every delivery is a POST of ' +
          '`{type, timestamp, data}` signed the Standard Webhooks way: `webhook-id`, `webhook-timestamp`, ' +
          '`webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`; retried with backoff ' +
          'until a 2xx answer or WEBHOOK_EXPIRE_MS.',
        request: s.webhookCreate,
        response: s.webhookWithSecretResponse,
      },
      async (ctx, { query, body }) => ok(ctx, await hooks.create(query.project_id, body)),
    )
    .route<Validated<never, ProjectQ & Page>>(
      {
        method: 'get',
        path: '/',
        summary: "List a project's webhooks, newest first",
        request: s.webhookList,
        response: s.webhookListResponse,
      },
      async (ctx, { query }) => ok(ctx, await hooks.list(query.project_id, query)),
    )
    .route<Validated<Id, ScopeQ>>(
      {
        method: 'get',
        path: '/:id',
        summary: 'Get a webhook (without its secret)',
        request: s.webhookGet,
        response: s.webhookResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await hooks.get(params.id, query.project_id)),
    )
    .route<Validated<Id, ScopeQ, s.WebhookUpdateBody>>(
      {
        method: 'patch',
        path: '/:id',
        summary: 'Update a webhook',
        description: '`events`, when given, replaces the list. The secret does not change.',
        request: s.webhookUpdate,
        response: s.webhookResponse,
      },
      async (ctx, { params, query, body }) => ok(ctx, await hooks.update(params.id, query.project_id, body)),
    )
    .route<Validated<Id, ScopeQ>>(
      {
        method: 'delete',
        path: '/:id',
        summary: 'Delete a webhook',
        description: 'Its deliveries go with it; one being retried is not attempted again.',
        request: s.webhookDelete,
      },
      async (ctx, { params, query }) => {
        await hooks.delete(params.id, query.project_id);
        ok(ctx, {});
      },
    )
    .route<Validated<Id, ScopeQ & Page>>(
      {
        method: 'get',
        path: '/:id/deliveries',
        summary: "A webhook's deliveries with their attempts, newest first",
        request: s.deliveryList,
        response: s.deliveryListResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await hooks.deliveries(params.id, query.project_id, query)),
    )
    .route<Validated<Id & { delivery_id: string }, ScopeQ>>(
      {
        method: 'post',
        path: '/:id/deliveries/:delivery_id/redeliver',
        permission: 'project:operate',
        summary: 'Send a delivery again',
        description:
          'The same body and `webhook-id`, with a new round of attempts. 409 while the delivery is still ' +
          'being attempted or the webhook is disabled.',
        request: s.deliveryRedeliver,
        response: s.deliveryResponse,
      },
      async (ctx, { params, query }) =>
        ok(ctx, await hooks.redeliver(params.id, params.delivery_id, query.project_id)),
    );
  const byRun = new ApiRouter('/api/agent-server/runs', 'Webhooks')
    .access({ read: 'project:read', write: 'project:operate' })
    .route<Validated<{ run_id: string }, ScopeQ & Page>>(
      {
        method: 'get',
        path: '/:run_id/deliveries',
        summary: "A run's webhook deliveries with their attempts, newest first",
        description:
          "Every delivery of the run's events: to the project's webhooks and to the converse request's " +
          'one-off `webhook` URL (`webhook_id` null).',
        request: s.runDeliveryList,
        response: s.deliveryListResponse,
      },
      async (ctx, { params, query }) =>
        ok(ctx, await hooks.runDeliveries(params.run_id, query.project_id, query)),
    )
    .route<Validated<{ run_id: string; delivery_id: string }, ScopeQ>>(
      {
        method: 'post',
        path: '/:run_id/deliveries/:delivery_id/redeliver',
        summary: "Send one of a run's deliveries again (a one-off URL's too)",
        description:
          'The same body and `webhook-id`, with a new round of attempts. 409 while the delivery is still ' +
          'being attempted or its webhook is disabled.',
        request: s.runDeliveryRedeliver,
        response: s.deliveryResponse,
      },
      async (ctx, { params, query }) =>
        ok(ctx, await hooks.redeliverForRun(params.run_id, params.delivery_id, query.project_id)),
    );
  return [byWebhook, byRun];
}
