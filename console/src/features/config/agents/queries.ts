import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client.js';
import type { Agent, AgentBody, Skill } from '../../../api/types.js';
import { projectResource, useSaving } from '../shared/queries.js';

const skillsKey = (agentId: string) => ['skills', agentId];

const agents = projectResource<Agent, AgentBody>('agents', {
  list: (project_id) =>
    api.GET('/api/agent-server/agents', { params: { query: { project_id, limit: 200 } } }),
  create: (project_id, body) =>
    api.POST('/api/agent-server/agents', { params: { query: { project_id } }, body }),
  update: (id, body) => api.PATCH('/api/agent-server/agents/{id}', { params: { path: { id } }, body }),
  remove: (id) => api.DELETE('/api/agent-server/agents/{id}', { params: { path: { id } } }),
});

/** The project's agents (the newest 200): for the agents tab, and as choices on every other page. */
export const useAgents = agents.useList;
export const useSaveAgent = agents.useSave;
export const useDeleteAgent = agents.useDelete;

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
