import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client.js';
import type { Model, ModelBody } from '../../../api/types.js';
import { useSaving } from '../shared/queries.js';

export const modelsKey = (projectId: string) => ['models', projectId];

export function useModels(projectId: string) {
  return useQuery({
    queryKey: modelsKey(projectId),
    queryFn: () =>
      unwrap<Model[]>(
        api.GET('/api/agent-server/models', { params: { query: { project_id: projectId, limit: 200 } } }),
      ),
  });
}

export function useSaveModel(projectId: string, id: string | undefined) {
  return useSaving([modelsKey(projectId)], (body: Partial<ModelBody>) =>
    id
      ? unwrap<Model>(api.PATCH('/api/agent-server/models/{id}', { params: { path: { id } }, body }))
      : unwrap<Model>(
          api.POST('/api/agent-server/models', {
            params: { query: { project_id: projectId } },
            body: body as ModelBody,
          }),
        ),
  );
}

export function useDeleteModel(projectId: string) {
  return useSaving([modelsKey(projectId)], (id: string) =>
    unwrap(api.DELETE('/api/agent-server/models/{id}', { params: { path: { id } } })),
  );
}
