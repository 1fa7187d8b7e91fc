import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client.js';
import type { VirtualKey, VirtualKeyBody, VirtualKeyWithSecret } from '../../../api/types.js';
import { useSaving } from '../shared/queries.js';

export const KEYS_KEY = ['virtual-keys'];

export function useVirtualKeys() {
  return useQuery({
    queryKey: KEYS_KEY,
    queryFn: () =>
      unwrap<VirtualKey[]>(api.GET('/api/agent-server/virtual-keys', { params: { query: { limit: 200 } } })),
  });
}

/** Create answers with the secret (once); update does not. */
export function useSaveVirtualKey(id: string | undefined) {
  return useSaving([KEYS_KEY], (body: Partial<VirtualKeyBody>) =>
    id
      ? unwrap<VirtualKey>(
          api.PATCH('/api/agent-server/virtual-keys/{id}', { params: { path: { id } }, body }),
        )
      : unwrap<VirtualKeyWithSecret>(
          api.POST('/api/agent-server/virtual-keys', { body: body as VirtualKeyBody }),
        ),
  );
}

export function useRotateVirtualKey() {
  return useSaving([KEYS_KEY], (id: string) =>
    unwrap<VirtualKeyWithSecret>(
      api.POST('/api/agent-server/virtual-keys/{id}/rotate', { params: { path: { id } } }),
    ),
  );
}

export function useRevokeVirtualKey() {
  return useSaving([KEYS_KEY], (id: string) =>
    unwrap(api.DELETE('/api/agent-server/virtual-keys/{id}', { params: { path: { id } } })),
  );
}
