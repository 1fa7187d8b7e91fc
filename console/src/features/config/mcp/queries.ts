import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client.js';
import type { McpAuthorizeResult, McpServer, McpServerBody, McpTool } from '../../../api/types.js';
import type { AuthorizationCalls } from '../shared/authorization.js';
import { projectResource } from '../shared/queries.js';

const servers = projectResource<McpServer, McpServerBody>('mcp-servers', {
  list: (project_id) =>
    api.GET('/api/agent-server/mcp-servers', { params: { query: { project_id, limit: 200 } } }),
  create: (project_id, body) =>
    api.POST('/api/agent-server/mcp-servers', { params: { query: { project_id } }, body }),
  update: (id, body) => api.PATCH('/api/agent-server/mcp-servers/{id}', { params: { path: { id } }, body }),
  remove: (id) => api.DELETE('/api/agent-server/mcp-servers/{id}', { params: { path: { id } } }),
});

export const useMcpServers = servers.useList;
export const useSaveMcpServer = servers.useSave;
export const useDeleteMcpServer = servers.useDelete;

/** Connects to the server and lists its tools; only when asked (`enabled`), since it reaches out. */
export function useInspect(id: string | undefined, enabled: boolean) {
  return useQuery({
    queryKey: ['mcp-inspect', id],
    enabled: enabled && !!id,
    retry: false,
    staleTime: 60_000,
    queryFn: () =>
      unwrap<{ tools: McpTool[] }>(
        api.POST('/api/agent-server/mcp-servers/{id}/inspect', { params: { path: { id: id! } } }),
      ),
  });
}

/**
 * Authorize and Forget authorization of an MCP server: POST …/authorize
 * gives the URL a person opens (the project's own tokens, or an end user's
 * for a server with per-user tokens), or `{status: 'authorized'}` when a
 * token came without anyone; DELETE …/authorization forgets the tokens.
 * Both refresh the list, whose `authorization` then says so.
 */
export const mcpAuthorization: AuthorizationCalls = {
  noun: 'server',
  listKey: servers.key,
  authorize: (id, endUserId) =>
    unwrap<McpAuthorizeResult>(
      api.POST('/api/agent-server/mcp-servers/{id}/authorize', {
        params: { path: { id } },
        body: endUserId ? { end_user_id: endUserId } : {},
      }),
    ),
  forget: (id, endUserId) =>
    unwrap<unknown>(
      api.DELETE('/api/agent-server/mcp-servers/{id}/authorization', {
        params: { path: { id }, query: endUserId ? { end_user_id: endUserId } : {} },
      }),
    ),
};
