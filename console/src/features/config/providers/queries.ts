import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client.js';
import type { Provider, ProviderBody } from '../../../api/types.js';
import { useSaving } from '../shared/queries.js';

const KEY = ['providers'];

export function useProviders() {
  return useQuery({
    queryKey: KEY,
    queryFn: () =>
      unwrap<Provider[]>(api.GET('/api/agent-server/providers', { params: { query: { limit: 200 } } })),
  });
}

export function useSaveProvider(id: string | undefined) {
  return useSaving([KEY], (body: Partial<ProviderBody>) =>
    id
      ? unwrap<Provider>(api.PATCH('/api/agent-server/providers/{id}', { params: { path: { id } }, body }))
      : unwrap<Provider>(api.POST('/api/agent-server/providers', { body: body as ProviderBody })),
  );
}

export function useDeleteProvider() {
  return useSaving([KEY], (id: string) =>
    unwrap(api.DELETE('/api/agent-server/providers/{id}', { params: { path: { id } } })),
  );
}
