import {
  allHandlersFinished,
  condition,
  patched,
  proxyActivities,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { ConversationDeleteActivities } from '../activities/session/conversation-delete.js';
import {
  awaitDeletionUpdate,
  LATE_SPAN_SWEEPS_MS,
  SUB_AGENT_CONVERSATIONS_PATCH,
  type DeletedConversationData,
  type DeleteConversationInput,
  type DeleteConversationResult,
} from './conversation-delete.definitions.js';

/*
 * Retried until they succeed: a deletion the API accepted must finish even if
 * the sandbox backend or Postgres is away for a while (each step is idempotent).
 */
const { endSessions, removeSandboxes, deleteConversationData, sweepLateSpans } =
  proxyActivities<ConversationDeleteActivities>({
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  });

/**
 * Deletes a conversation: first its sessions (terminated, their histories
 * deleted), so no turn writes after, then its sandboxes with their
 * workspaces, then its rows and spans in one transaction, so the
 * conversation stays visible (and the DELETE can be repeated) until
 * everything else is gone. Then sweeps spans that land late.
 *
 * The conversations its sub-agent calls ran in go with it (their sessions
 * and sandboxes too, their rows in the same transaction). A call that was
 * under way may store one more after the sessions were listed: the delete
 * then ends its sessions too and tries again.
 */
export async function deleteConversationWorkflow(
  input: DeleteConversationInput,
): Promise<DeleteConversationResult> {
  let result: DeleteConversationResult | null = null;
  setHandler(awaitDeletionUpdate, async () => {
    await condition(() => result !== null);
    return result!;
  });
  const withSubAgents = patched(SUB_AGENT_CONVERSATIONS_PATCH);
  let all: DeleteConversationInput = withSubAgents ? { ...input, withSubAgentConversations: true } : input;
  let pending = all;
  let data: DeletedConversationData;
  for (;;) {
    await endSessions(pending);
    await removeSandboxes(pending);
    data = await deleteConversationData(all);
    if (!withSubAgents || !data.unended?.length) break;
    pending = { ...all, sessions: data.unended };
    all = { ...all, sessions: [...all.sessions, ...data.unended] };
  }
  result = { deleted: data.deleted };
  await condition(allHandlersFinished);
  for (const ms of input.lateSpanSweepsMs ?? LATE_SPAN_SWEEPS_MS) {
    await sleep(ms);
    await sweepLateSpans({
      projectId: input.projectId,
      conversationId: input.conversationId,
      ...(data.subAgentConversationIds?.length
        ? { subAgentConversationIds: data.subAgentConversationIds }
        : {}),
      ...(data.sharedTraceIds?.length ? { sharedTraceIds: data.sharedTraceIds } : {}),
      before: data.deletedAt,
      traceIds: data.recentTraceIds,
    });
  }
  return result;
}
