import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client.js';
import type { Run } from '../api/types.js';

/** The most the side bar counts; beyond it, it says "200+". */
export const COUNTED = 200;

/**
 * How many of the project's runs wait for someone (approval, budget, a
 * decision on a tool call, an MCP server's authorization, an answer to a
 * server's question), for the side bar; polled gently since it shows on
 * every page. Under the `runs` key, so a decision taken in the inbox (which
 * refreshes the run lists) updates it at once.
 */
export function useWaitingRuns(projectId: string | undefined): number | undefined {
  const { data } = useQuery({
    queryKey: ['runs', 'waiting', projectId, 'count'],
    enabled: Boolean(projectId),
    refetchInterval: 10_000,
    queryFn: () =>
      unwrap<Run[]>(
        api.GET('/api/agent-server/runs', {
          params: {
            query: {
              project_id: projectId!,
              status: [
                'awaiting_approval',
                'awaiting_budget',
                'awaiting_decision',
                'awaiting_authorization',
                'awaiting_input',
              ],
              limit: COUNTED,
            },
          },
        }),
      ),
  });
  return data?.length;
}
