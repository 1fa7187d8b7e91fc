import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.js';
import type {
  BudgetDecisionBody,
  ConversationBudget,
  InputAnswerBody,
  PendingApproval,
  Run,
  ToolDecisionBody,
} from '../../api/types.js';

export type WaitingCall = NonNullable<PendingApproval['calls']>[number];

/** Polled, since a pause can happen in any session at any time. */
const POLL_MS = 3000;

/** The project's runs waiting for approval, with the calls each waits on. */
export function usePendingApprovals(projectId: string | undefined) {
  return useQuery({
    queryKey: ['approvals', projectId],
    enabled: Boolean(projectId),
    refetchInterval: POLL_MS,
    queryFn: () =>
      unwrap<PendingApproval[]>(
        api.GET('/api/agent-server/approvals', { params: { query: { project_id: projectId!, limit: 200 } } }),
      ),
  });
}

/** The runs the inbox lists by their `pause` (every wait but approval, which has its own list). */
export const PAUSED_STATUSES = [
  'awaiting_budget',
  'awaiting_decision',
  'awaiting_authorization',
  'awaiting_input',
] as const;

/**
 * The project's runs waiting for budget, for a decision on a tool call, for
 * an MCP server's authorization or for a person's answer to a server's
 * question (their `pause` says which).
 */
export function useOtherWaits(projectId: string | undefined) {
  return useQuery({
    queryKey: ['runs', 'waiting', projectId, 'paused'],
    enabled: Boolean(projectId),
    refetchInterval: POLL_MS,
    queryFn: () =>
      unwrap<Run[]>(
        api.GET('/api/agent-server/runs', {
          params: {
            query: { project_id: projectId!, status: [...PAUSED_STATUSES], limit: 200 },
          },
        }),
      ),
  });
}

/** After any decision the inbox, the side bar's count and the run lists are read again. */
function useRefreshAfter() {
  const qc = useQueryClient();
  return async () => {
    await Promise.all([
      qc.invalidateQueries({ queryKey: ['approvals'] }),
      qc.invalidateQueries({ queryKey: ['runs'] }),
    ]);
  };
}

export interface Decision {
  runId: string;
  approved: string[];
  rejected: string[];
}

/** POST /runs/{run_id}/approvals. */
export function useDecide() {
  const onSettled = useRefreshAfter();
  return useMutation({
    mutationFn: (d: Decision) =>
      unwrap<unknown>(
        api.POST('/api/agent-server/runs/{run_id}/approvals', {
          params: { path: { run_id: d.runId } },
          body: { approved_call_ids: d.approved, rejected_call_ids: d.rejected },
        }),
      ),
    onSettled,
  });
}

/** POST /runs/{run_id}/budget: `resume` (409 while the call still does not fit) or `cancel`. */
export function useBudgetDecision(runId: string) {
  const onSettled = useRefreshAfter();
  return useMutation({
    mutationFn: (action: BudgetDecisionBody['action']) =>
      unwrap<Run>(
        api.POST('/api/agent-server/runs/{run_id}/budget', {
          params: { path: { run_id: runId } },
          body: { action },
        }),
      ),
    onSettled,
  });
}

/** POST /runs/{run_id}/decision: call the tool again, or supply its result. */
export function useToolDecision(runId: string) {
  const onSettled = useRefreshAfter();
  return useMutation({
    mutationFn: (decision: ToolDecisionBody) =>
      unwrap<Run>(
        api.POST('/api/agent-server/runs/{run_id}/decision', {
          params: { path: { run_id: runId } },
          body: decision,
        }),
      ),
    onSettled,
  });
}

/**
 * POST /runs/{run_id}/input: the person's answer to the MCP server's
 * question (`accept` with the form's `content`), or that they would not
 * (`decline`, `cancel`). A 400 names the fields as `content.<name>`.
 */
export function useAnswerInput(runId: string) {
  const onSettled = useRefreshAfter();
  return useMutation({
    mutationFn: (answer: InputAnswerBody) =>
      unwrap<Run>(
        api.POST('/api/agent-server/runs/{run_id}/input', {
          params: { path: { run_id: runId } },
          body: answer,
        }),
      ),
    onSettled,
  });
}

/** PATCH /conversations/{id} `budget`: raising it wakes the runs waiting on it whose call now fits. */
export function useSaveConversationBudget(projectId: string, conversationId: string) {
  const qc = useQueryClient();
  const refresh = useRefreshAfter();
  return useMutation({
    mutationFn: (budget: ConversationBudget) =>
      unwrap<unknown>(
        api.PATCH('/api/agent-server/conversations/{conversation_id}', {
          params: { path: { conversation_id: conversationId }, query: { project_id: projectId } },
          body: { budget },
        }),
      ),
    onSettled: async () => {
      await Promise.all([
        refresh(),
        qc.invalidateQueries({ queryKey: ['conversation', projectId, conversationId] }),
      ]);
    },
  });
}
