import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.js';
import type { PendingApproval } from '../../api/types.js';

export type WaitingCall = NonNullable<PendingApproval['calls']>[number];

/** The project's paused runs; polled, since a pause can happen in any session at any time. */
export function usePendingApprovals(projectId: string | undefined) {
  return useQuery({
    queryKey: ['approvals', projectId],
    enabled: Boolean(projectId),
    refetchInterval: 3000,
    queryFn: () =>
      unwrap<PendingApproval[]>(
        api.GET('/api/agent-server/approvals', { params: { query: { project_id: projectId!, limit: 200 } } }),
      ),
  });
}

export interface Decision {
  runId: string;
  approved: string[];
  rejected: string[];
}

/** POST /runs/{run_id}/approvals; the inbox and the run lists are refreshed after it. */
export function useDecide() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (d: Decision) =>
      unwrap<unknown>(
        api.POST('/api/agent-server/runs/{run_id}/approvals', {
          params: { path: { run_id: d.runId } },
          body: { approved_call_ids: d.approved, rejected_call_ids: d.rejected },
        }),
      ),
    onSettled: async () => {
      await Promise.all([
        qc.invalidateQueries({ queryKey: ['approvals'] }),
        qc.invalidateQueries({ queryKey: ['runs'] }),
      ]);
    },
  });
}
