import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client.js';
import type { Agent, AgentBody, Skill } from '../../../api/types.js';
import { useSaving } from '../shared/queries.js';

export const agentsKey = (projectId: string | undefined) => ['agents', projectId];
const skillsKey = (agentId: string) => ['skills', agentId];

/** The project's agents (the newest 200): for the agents tab, and as choices on every other page. */
export function useAgents(projectId: string | undefined) {
  return useQuery({
    queryKey: agentsKey(projectId),
    enabled: Boolean(projectId),
    queryFn: () =>
      unwrap<Agent[]>(
        api.GET('/api/agent-server/agents', { params: { query: { project_id: projectId!, limit: 200 } } }),
      ),
  });
}

export function useSaveAgent(projectId: string, id: string | undefined) {
  return useSaving([agentsKey(projectId)], (body: Partial<AgentBody>) =>
    id
      ? unwrap<Agent>(api.PATCH('/api/agent-server/agents/{id}', { params: { path: { id } }, body }))
      : unwrap<Agent>(
          api.POST('/api/agent-server/agents', {
            params: { query: { project_id: projectId } },
            body: body as AgentBody,
          }),
        ),
  );
}

export function useDeleteAgent(projectId: string) {
  return useSaving([agentsKey(projectId)], (id: string) =>
    unwrap(api.DELETE('/api/agent-server/agents/{id}', { params: { path: { id } } })),
  );
}

export function useSkills(agentId: string) {
  return useQuery({
    queryKey: skillsKey(agentId),
    queryFn: () =>
      unwrap<Skill[]>(
        api.GET('/api/agent-server/agents/{id}/skills', {
          params: { path: { id: agentId }, query: { limit: 200 } },
        }),
      ),
  });
}

/** Uploads one zipped skill folder (PUT replaces the whole folder). */
export function uploadSkill(agentId: string, name: string, zip: Blob) {
  return unwrap<Skill>(
    api.PUT('/api/agent-server/agents/{id}/skills/{name}', {
      params: { path: { id: agentId, name } },
      body: zip as never,
      bodySerializer: (b: unknown) => b as Blob,
      headers: { 'content-type': 'application/zip' },
    }),
  );
}

export function useUploadSkill(agentId: string) {
  return useSaving([skillsKey(agentId)], ({ name, zip }: { name: string; zip: Blob }) =>
    uploadSkill(agentId, name, zip),
  );
}

export function useDeleteSkill(agentId: string) {
  return useSaving([skillsKey(agentId)], (name: string) =>
    unwrap(
      api.DELETE('/api/agent-server/agents/{id}/skills/{name}', { params: { path: { id: agentId, name } } }),
    ),
  );
}
