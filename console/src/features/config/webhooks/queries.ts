import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client.js';
import type { Webhook, WebhookBody, WebhookWithSecret } from '../../../api/types.js';
import { useSaving } from '../shared/queries.js';

export const WEBHOOK_EVENTS = [
  'run.completed',
  'run.failed',
  'run.paused',
  'run.cancelled',
  'eval.completed',
  'budget.threshold',
] as const;

const key = (projectId: string) => ['webhooks', projectId];

/** The project's webhooks; a webhook has no name, its URL stands for one. */
export function useWebhooks(projectId: string) {
  return useQuery({
    queryKey: key(projectId),
    queryFn: () =>
      unwrap<Webhook[]>(
        api.GET('/api/agent-server/webhooks', { params: { query: { project_id: projectId, limit: 200 } } }),
      ),
    select: (rows) => rows.map((w) => ({ ...w, name: w.url })),
  });
}

/** Create answers with the secret (once); update does not. */
export function useSaveWebhook(projectId: string, id: string | undefined) {
  return useSaving([key(projectId)], (body: Partial<WebhookBody>) =>
    id
      ? unwrap<Webhook>(api.PATCH('/api/agent-server/webhooks/{id}', { params: { path: { id } }, body }))
      : unwrap<WebhookWithSecret>(
          api.POST('/api/agent-server/webhooks', {
            params: { query: { project_id: projectId } },
            body: body as WebhookBody,
          }),
        ),
  );
}

export function useDeleteWebhook(projectId: string) {
  return useSaving([key(projectId)], (id: string) =>
    unwrap(api.DELETE('/api/agent-server/webhooks/{id}', { params: { path: { id } } })),
  );
}
