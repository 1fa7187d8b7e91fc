import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { SubAgentActivities } from '../activities/turns/sub-agent-activities.js';
import type { TurnActivities } from '../activities/turns/turn-activities.js';
import { activityDefaults } from '../temporal.config.js';
import type { CancelAction } from './session.definitions.js';
import {
  cancelSubAgentCallSignal,
  type SubAgentCallInput,
  type SubAgentCallResult,
} from './sub-agent-call.definitions.js';

/* Postgres and Temporal work, retried until they are back: the child's run is keyed by the call. */
const { startSubAgentTurn, answerSubAgentCall, cancelSubAgentRun } = proxyActivities<SubAgentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/* A sub-agent's turn may wait for a person for days; a dead worker's wait moves on after the heartbeat timeout. */
function waits(heartbeatTimeoutMs: number | undefined) {
  return proxyActivities<TurnActivities>({
    ...activityDefaults.persistence,
    startToCloseTimeout: '30 days',
    heartbeatTimeout: heartbeatTimeoutMs ?? '30 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });
}

/**
 * One call of a sub-agent's tool, a child of the calling session's
 * workflow (id `sub-agent/<parent run>/<call id>`): the sub-agent's run is
 * stored in a conversation of its own (ids derived from the call, so a
 * repeated start makes no second run) and handed to that agent's session;
 * once it has ended, its answer is stored as the call's result.
 *
 * The calling turn, cancelled, signals the action (`interrupt` or
 * `rollback`) and waits for this workflow: the sub-agent's run is cancelled
 * the same way before the caller's own run ends. Cancelled by Temporal (the
 * caller's session terminated), the wait's activity interrupts the run.
 */
export async function subAgentCallWorkflow(input: SubAgentCallInput): Promise<SubAgentCallResult> {
  let cancel: CancelAction | undefined;
  setHandler(cancelSubAgentCallSignal, ({ action }) => {
    cancel ??= action;
  });
  const started = await startSubAgentTurn(input);
  if (started.kind === 'refused') {
    await answerSubAgentCall({ ...input, error: started.message });
    return { childRunId: null, status: 'refused' };
  }
  const runId = started.runId;
  let ended = false;
  // The wait goes on while the cancel is delivered: it ends with the run, whichever way that comes.
  const stopping = condition(() => cancel !== undefined || ended).then(() =>
    cancel && !ended ? cancelSubAgentRun({ runId, action: cancel }) : undefined,
  );
  const { status } = await waits(input.heartbeatTimeoutMs).awaitRunEnd(runId);
  ended = true;
  if (cancel) await stopping;
  await answerSubAgentCall({ ...input, childRunId: runId });
  return { childRunId: runId, status };
}
