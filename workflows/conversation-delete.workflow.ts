import { allHandlersFinished, condition, proxyActivities, setHandler, sleep } from '@temporalio/workflow';
import type { ConversationDeleteActivities } from '../activities/session/conversation-delete.js';
import {
  awaitDeletionUpdate,
  LATE_SPAN_SWEEPS_MS,
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
 */
export async function deleteConversationWorkflow(
  input: DeleteConversationInput,
): Promise<DeleteConversationResult> {
  let result: DeleteConversationResult | null = null;
  setHandler(awaitDeletionUpdate, async () => {
    await condition(() => result !== null);
    return result!;
  });
  await endSessions(input);
  await removeSandboxes(input);
  const data = await deleteConversationData(input);
  result = { deleted: data.deleted };
  await condition(allHandlersFinished);
  for (const ms of input.lateSpanSweepsMs ?? LATE_SPAN_SWEEPS_MS) {
    await sleep(ms);
    await sweepLateSpans({
      projectId: input.projectId,
      conversationId: input.conversationId,
      before: data.deletedAt,
      traceIds: data.recentTraceIds,
    });
  }
  return result;
}
