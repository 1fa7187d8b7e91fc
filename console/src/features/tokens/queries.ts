import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.js';
import type { ApiToken, ApiTokenBody, ApiTokenWithSecret } from '../../api/types.js';
import { useSaving } from '../config/shared/queries.js';

const TOKENS = ['tokens'];

/** My personal tokens (organisation admins: and every service token), newest first. */
export function useTokens() {
  return useQuery({
    queryKey: TOKENS,
    queryFn: () =>
      unwrap<ApiToken[]>(api.GET('/api/agent-server/tokens', { params: { query: { limit: 200 } } })),
  });
}

/** Issues a token: the answer holds its secret, the only time anyone sees it. */
export function useIssueToken() {
  return useSaving([TOKENS], (body: ApiTokenBody) =>
    unwrap<ApiTokenWithSecret>(api.POST('/api/agent-server/tokens', { body })),
  );
}

export function useRevokeToken() {
  return useSaving([TOKENS], (id: string) =>
    unwrap(api.DELETE('/api/agent-server/tokens/{id}', { params: { path: { id } } })),
  );
}
