import {
  ActivityCancellationType,
  ParentClosePolicy,
  proxyActivities,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { createCronActivities } from '../activities/turns/cron-activities.js';
import type { TurnActivities } from '../activities/turns/turn-activities.js';
import {
  DELETE_CONVERSATION_WORKFLOW_TYPE,
  deleteConversationWorkflowId,
} from './conversation-delete.definitions.js';
import type { CronTurnInput, CronTurnResult } from './turns.definitions.js';

type CronActivities = ReturnType<typeof createCronActivities>;

/* Retried until Temporal or Postgres are back: the firing's run is keyed by its message id. */
const { runCronTurn, cronConversationDeletion } = proxyActivities<CronActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/* A turn may wait for approval for days; a dead worker's wait moves on after the heartbeat timeout. */
const { awaitRunEnd } = proxyActivities<TurnActivities>({
  startToCloseTimeout: '30 days',
  heartbeatTimeout: '30 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/**
 * A stateless cron's conversation, deleted once its run has ended, by the
 * workflow DELETE /conversations runs; it goes on (its late span sweeps)
 * after this firing has closed.
 */
async function deleteConversation(projectId: string, conversationId: string): Promise<void> {
  const input = await cronConversationDeletion({ projectId, conversationId });
  if (!input) return;
  try {
    await startChild(DELETE_CONVERSATION_WORKFLOW_TYPE, {
      workflowId: deleteConversationWorkflowId(input.conversationPk),
      args: [input],
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
  } catch (err) {
    // Someone deletes it already.
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * One firing of a cron (the action of its Temporal Schedule): runs the turn,
 * then lasts as long as the turn does, so the schedule's overlap policy
 * decides what a firing does while the previous turn still runs. The
 * action's workflow id (the schedule's id and the scheduled time) is the
 * turn's message id.
 */
export async function cronTurnWorkflow(input: CronTurnInput): Promise<CronTurnResult> {
  const started = await runCronTurn({ cronId: input.cronId, actionKey: workflowInfo().workflowId });
  if (started.status !== 'started') return started;
  const ended = await awaitRunEnd(started.runId);
  if (started.deleteConversation) await deleteConversation(started.projectId, started.conversationId);
  return { ...started, runStatus: ended.status };
}
