import { proxyActivities, sleep } from '@temporalio/workflow';
import type { TurnActivities } from '../activities/turns/turn-activities.js';
import type { DelayedTurnInput, DelayedTurnResult } from './turns.definitions.js';

/* Retried until the session can be reached: the Update's id is the run's message id. */
const { deliverStoredRun } = proxyActivities<TurnActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * A stored run handed to its session after a delay (a durable timer: a
 * worker or server restart does not lose it). A run cancelled meanwhile is
 * not delivered.
 */
export async function delayedTurnWorkflow(input: DelayedTurnInput): Promise<DelayedTurnResult> {
  if (input.delaySeconds > 0) await sleep(input.delaySeconds * 1000);
  return deliverStoredRun(input.runId);
}
