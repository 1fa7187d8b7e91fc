import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client.js';
import type { Agent, AgentVersion } from '../../../api/types.js';
import { useSaving } from '../shared/queries.js';

// Under the project's agents key: saving the agent (which makes a version) refreshes the list too.
const agentsKey = (projectId: string) => ['agents', projectId];
const versionsKey = (projectId: string, agentId: string) => [...agentsKey(projectId), 'versions', agentId];

/** The agent's versions, newest first (the newest 200), the one in force marked. */
export function useAgentVersions(projectId: string, agentId: string) {
  return useQuery({
    queryKey: versionsKey(projectId, agentId),
    queryFn: () =>
      unwrap<AgentVersion[]>(
        api.GET('/api/agent-server/agents/{id}/versions', {
          params: { path: { id: agentId }, query: { project_id: projectId, limit: 200 } },
        }),
      ),
  });
}

/** Puts a version back in force; the project's agents and this one's versions are read again. */
export function usePinVersion(projectId: string, agentId: string) {
  return useSaving([agentsKey(projectId)], (version: number) =>
    unwrap<Agent>(
      api.POST('/api/agent-server/agents/{id}/versions/{version}/pin', {
        params: { path: { id: agentId, version }, query: { project_id: projectId } },
      }),
    ),
  );
}
