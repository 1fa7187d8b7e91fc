import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client.js';
import type { A2aAgent, A2aAgentBody, A2aAuthorizeResult, A2aInspection } from '../../../api/types.js';
import type { AuthorizationCalls } from '../shared/authorization.js';
import { projectResource } from '../shared/queries.js';

const agents = projectResource<A2aAgent, A2aAgentBody>('a2a-agents', {
  list: (project_id) =>
    api.GET('/api/agent-server/a2a-agents', { params: { query: { project_id, limit: 200 } } }),
  create: (project_id, body) =>
    api.POST('/api/agent-server/a2a-agents', { params: { query: { project_id } }, body }),
  update: (id, body) => api.PATCH('/api/agent-server/a2a-agents/{id}', { params: { path: { id } }, body }),
  remove: (id) => api.DELETE('/api/agent-server/a2a-agents/{id}', { params: { path: { id } } }),
});

export const useA2aAgents = agents.useList;
export const useSaveA2aAgent = agents.useSave;
export const useDeleteA2aAgent = agents.useDelete;

/** Fetches the agent card and lists its skills; only when asked (`enabled`), since it reaches out. */
export function useInspectA2a(id: string | undefined, enabled: boolean) {
  return useQuery({
    queryKey: ['a2a-inspect', id],
    enabled: enabled && !!id,
    retry: false,
    staleTime: 60_000,
    queryFn: () =>
      unwrap<A2aInspection>(
        api.POST('/api/agent-server/a2a-agents/{id}/inspect', { params: { path: { id: id! } } }),
      ),
  });
}

/**
 * Authorize and Forget authorization of a remote A2A agent, as an MCP
 * server's: POST …/authorize gives the URL a person opens (or
 * `{status: 'authorized'}` when a token came without anyone), DELETE
 * …/authorization forgets the tokens; both refresh the list.
 */
export const a2aAuthorization: AuthorizationCalls = {
  noun: 'agent',
  listKey: agents.key,
  authorize: (id, endUserId) =>
    unwrap<A2aAuthorizeResult>(
      api.POST('/api/agent-server/a2a-agents/{id}/authorize', {
        params: { path: { id } },
        body: endUserId ? { end_user_id: endUserId } : {},
      }),
    ),
  forget: (id, endUserId) =>
    unwrap<unknown>(
      api.DELETE('/api/agent-server/a2a-agents/{id}/authorization', {
        params: { path: { id }, query: endUserId ? { end_user_id: endUserId } : {} },
      }),
    ),
};
