import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client.js';
import type { Data, Item } from '../../../api/types.js';
import { useSaving } from '../shared/queries.js';

/** A cron as our API lists it (the list's rows always carry every field). */
export type Cron = Required<Item<Data<'getApiAgentServerCrons'>>>;

const cronsKey = (projectId: string, agentId: string) => ['crons', projectId, agentId];

/** The agent's crons (made through the Agent Protocol door), newest first. */
export function useAgentCrons(projectId: string, agentId: string) {
  return useQuery({
    queryKey: cronsKey(projectId, agentId),
    queryFn: () =>
      unwrap<Cron[]>(
        api.GET('/api/agent-server/crons', {
          params: { query: { project_id: projectId, agent_id: agentId, limit: 200 } },
        }),
      ),
  });
}

/** Pauses or resumes a cron (its Temporal Schedule with it), then refreshes the list. */
export function useSetCronPaused(projectId: string, agentId: string) {
  return useSaving([cronsKey(projectId, agentId)], ({ id, paused }: { id: string; paused: boolean }) =>
    unwrap<Cron>(
      paused
        ? api.POST('/api/agent-server/crons/{id}/pause', { params: { path: { id } } })
        : api.POST('/api/agent-server/crons/{id}/resume', { params: { path: { id } } }),
    ),
  );
}
