import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client.js';
import type { McpServer, McpServerBody, McpTool } from '../../../api/types.js';
import { useSaving } from '../shared/queries.js';

export const mcpKey = (projectId: string) => ['mcp-servers', projectId];

export function useMcpServers(projectId: string) {
  return useQuery({
    queryKey: mcpKey(projectId),
    queryFn: () =>
      unwrap<McpServer[]>(
        api.GET('/api/agent-server/mcp-servers', {
          params: { query: { project_id: projectId, limit: 200 } },
        }),
      ),
  });
}

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

export function useSaveMcpServer(projectId: string, id: string | undefined) {
  return useSaving([mcpKey(projectId)], (body: Partial<McpServerBody>) =>
    id
      ? unwrap<McpServer>(api.PATCH('/api/agent-server/mcp-servers/{id}', { params: { path: { id } }, body }))
      : unwrap<McpServer>(
          api.POST('/api/agent-server/mcp-servers', {
            params: { query: { project_id: projectId } },
            body: body as McpServerBody,
          }),
        ),
  );
}

export function useDeleteMcpServer(projectId: string) {
  return useSaving([mcpKey(projectId)], (id: string) =>
    unwrap(api.DELETE('/api/agent-server/mcp-servers/{id}', { params: { path: { id } } })),
  );
}
