import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client.js';
import type { JsonSchemaDoc, SchemaBody } from '../../../api/types.js';
import { useSaving } from '../shared/queries.js';

export const schemasKey = (projectId: string) => ['schemas', projectId];

export function useSchemas(projectId: string) {
  return useQuery({
    queryKey: schemasKey(projectId),
    queryFn: () =>
      unwrap<JsonSchemaDoc[]>(
        api.GET('/api/agent-server/schemas', { params: { query: { project_id: projectId, limit: 200 } } }),
      ),
  });
}

export function useSaveSchema(projectId: string, id: string | undefined) {
  return useSaving([schemasKey(projectId)], (body: Partial<SchemaBody>) =>
    id
      ? unwrap<JsonSchemaDoc>(api.PATCH('/api/agent-server/schemas/{id}', { params: { path: { id } }, body }))
      : unwrap<JsonSchemaDoc>(
          api.POST('/api/agent-server/schemas', {
            params: { query: { project_id: projectId } },
            body: body as SchemaBody,
          }),
        ),
  );
}

export function useDeleteSchema(projectId: string) {
  return useSaving([schemasKey(projectId)], (id: string) =>
    unwrap(api.DELETE('/api/agent-server/schemas/{id}', { params: { path: { id } } })),
  );
}
