import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client.js';
import type { PendingApproval } from '../api/types.js';

/** The most the side bar counts; beyond it, it says "200+". */
export const COUNTED = 200;

/**
 * How many of the project's runs wait for an approval, for the side bar.
 * The same query the inbox reads (it polls faster while open), polled
 * gently here since it shows on every page.
 */
export function useWaitingApprovals(projectId: string | undefined): number | undefined {
  const { data } = useQuery({
    queryKey: ['approvals', projectId],
    enabled: Boolean(projectId),
    refetchInterval: 10_000,
    queryFn: () =>
      unwrap<PendingApproval[]>(
        api.GET('/api/agent-server/approvals', {
          params: { query: { project_id: projectId!, limit: COUNTED } },
        }),
      ),
  });
  return data?.length;
}
