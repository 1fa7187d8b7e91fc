import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client.js';
import type { McpServer, McpServerBody, McpTool } from '../../../api/types.js';
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
