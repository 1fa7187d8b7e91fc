import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Logger } from '../../core/logger.js';
import { ServiceUnavailableError, ValidationError } from '../../core/errors.js';
import {
  DELAYED_TURN_WORKFLOW_TYPE,
  delayedTurnWorkflowId,
  type DelayedTurnInput,
} from '../../workflows/turns.definitions.js';

/** What it needs of the API's deps (AppDeps fits). */
export interface DelayedTurnDeps {
  temporal: { client: Client };
  config: { temporalTaskQueue: string };
  logger: Logger;
}

/** The longest delay a run may ask for (`after_seconds`): a week. */
export const MAX_DELAY_SECONDS = 7 * 24 * 3600;

/**
 * Hands a stored run to its session after `delaySeconds` (the Agent
 * Protocol's `after_seconds`): a workflow (`delayed-turn/<run id>`) sleeps
 * durably, then delivers the run as converse would. Starting it again for
 * the same run is harmless: the first one stands. A run cancelled meanwhile
 * is not delivered.
 */
export async function startDelayedTurn(
  deps: DelayedTurnDeps,
  runId: string,
  delaySeconds: number,
): Promise<{ workflowId: string }> {
  if (!Number.isFinite(delaySeconds) || delaySeconds < 0 || delaySeconds > MAX_DELAY_SECONDS)
    throw ValidationError.field(
      'after_seconds',
      `after_seconds must be between 0 and ${MAX_DELAY_SECONDS}`,
      'number.range',
    );
  const workflowId = delayedTurnWorkflowId(runId);
  const input: DelayedTurnInput = { runId, delaySeconds };
  try {
    await deps.temporal.client.workflow.start(DELAYED_TURN_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: deps.config.temporalTaskQueue,
      args: [input],
      // Once per run, even after the first has finished: a run is delivered at most once this way.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
      deps.logger.error({ err, runId }, 'could not start the delayed turn');
      throw new ServiceUnavailableError({
        temporal: 'the delayed run could not be scheduled; try again',
        run_id: runId,
      });
    }
  }
  return { workflowId };
}
