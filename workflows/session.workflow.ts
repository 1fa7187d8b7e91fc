import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { SessionActivities } from '../activities/session/session-activities.js';
import { activityDefaults } from '../temporal.config.js';
import {
  converseUpdate,
  sessionStateQuery,
  type ConverseUpdateArgs,
  type PendingStep,
  type SessionInput,
  type SessionState,
} from './session.definitions.js';

/** Runs remembered as done in this workflow run, so a re-sent Update is not queued twice. */
const MAX_REMEMBERED = 500;

/**
 * One agent session (agent + conversation). Each user message arrives as an
 * Update carrying only its run id; turns run one at a time in arrival order.
 * The transcript lives in Postgres: every step is an activity that reads and
 * writes it by id, so a worker crash repeats at most the step it interrupted
 * (and that step is idempotent).
 */
export async function sessionWorkflow(input: SessionInput): Promise<{ turns: number }> {
  const { settings } = input;
  /** Runs accepted and not yet finished, in arrival order; the first one is running. */
  const queue: string[] = [];
  const done = new Set<string>();
  let turns = input.turnsCompleted ?? 0;
  let turnsThisRun = 0;
  let current: string | null = null;
  let step = 0;
  let pending: PendingStep = 'none';

  // Bookkeeping in Postgres: retried until it works (an outage delays the turn, never fails the session).
  const local = proxyLocalActivities<SessionActivities>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '500 ms', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  });
  const { summarizeHistory } = proxyActivities<SessionActivities>({
    ...activityDefaults.modelCall,
    heartbeatTimeout: settings.modelHeartbeatTimeoutMs,
  });
  const { callModel } = proxyActivities<SessionActivities>({
    ...activityDefaults.modelCall,
    heartbeatTimeout: settings.modelHeartbeatTimeoutMs,
  });
  const { runToolCalls } = proxyActivities<SessionActivities>(activityDefaults.toolCall);

  /*
   * The turn runs inside its Update's handler, so its activities belong to
   * the converse request that sent it (one trace per request). The API waits
   * only for the Update to be accepted; handlers take turns in arrival order.
   */
  setHandler(
    converseUpdate,
    async ({ runId }) => {
      if (current === runId || queue.includes(runId) || done.has(runId)) return { runId, position: 0 };
      queue.push(runId);
      const position = queue.length - 1;
      await condition(() => queue[0] === runId);
      current = runId;
      turns++;
      turnsThisRun++;
      try {
        await runTurn(runId);
      } finally {
        current = null;
        pending = 'none';
        queue.shift();
        done.add(runId);
        if (done.size > MAX_REMEMBERED) done.delete(done.values().next().value!);
      }
      return { runId, position };
    },
    {
      validator: (args: ConverseUpdateArgs | undefined) => {
        if (typeof args?.runId !== 'string' || !/^[0-9a-f-]{36}$/.test(args.runId))
          throw new Error('runId must be a uuid');
      },
    },
  );
  setHandler(sessionStateQuery, (): SessionState => ({
    status: current ? 'running' : 'idle',
    current_run_id: current,
    current_turn: turns,
    current_step: step,
    pending_step: pending,
    queued_run_ids: queue.filter((id) => id !== current),
  }));

  async function runTurn(runId: string): Promise<void> {
    pending = 'starting';
    step = 0;
    try {
      let corrected = false;
      let summarized = false;
      for (step = 1; ; step++) {
        pending = 'model_call';
        // Step 1 also starts the turn: it pins the agent's plan on the run.
        const result = await callModel(runId, step, summarized);
        // The final answer's activity has already recorded the run as completed.
        if (result.kind === 'final' || result.kind === 'over') return;
        if (result.kind === 'summarize') {
          pending = 'summarize';
          await summarizeHistory(runId);
          summarized = true;
          step--;
          continue;
        }
        if (result.kind === 'invalid_output') {
          if (corrected) {
            throw ApplicationFailure.nonRetryable(
              `the answer does not match the agent's schema: ${result.errors.join('; ')}`,
              'schema_validation_failed',
              { errors: result.errors },
            );
          }
          // One corrective retry, which does not count as an iteration.
          corrected = true;
          continue;
        }
        pending = 'tools';
        if (step >= result.maxIterations) {
          await runToolCalls(runId, step, 'maximum iterations reached');
          throw ApplicationFailure.nonRetryable('maximum iterations reached', 'max_iterations', {
            max_iterations: result.maxIterations,
          });
        }
        await runToolCalls(runId, step);
      }
    } catch (err) {
      pending = 'finishing';
      await local.finishTurn({ runId, status: 'failed', error: turnError(err) });
    }
  }

  for (;;) {
    const gotMessage = await condition(() => queue.length > 0, settings.idleTimeoutMs);
    if (!gotMessage) {
      // Idle: finish, unless an Update slipped in meanwhile.
      await condition(allHandlersFinished);
      if (queue.length === 0) {
        log.info('session idle; completing', { turns });
        return { turns };
      }
      continue;
    }
    await condition(() => queue.length === 0);
    if (workflowInfo().continueAsNewSuggested || turnsThisRun >= settings.continueAsNewAfterTurns) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof sessionWorkflow>({ ...input, turnsCompleted: turns });
    }
  }
}

/** The failure as the run reports it: the application failure's type and message, without Temporal's wrapping. */
function turnError(err: unknown): { code: string; message: string; details?: unknown } {
  let cause: unknown = err;
  if (cause instanceof ActivityFailure) cause = cause.cause;
  if (cause instanceof ApplicationFailure) {
    const details = cause.details?.[0];
    return {
      code: cause.type ?? 'error',
      message: cause.message,
      ...(details !== undefined ? { details } : {}),
    };
  }
  return { code: 'error', message: cause instanceof Error ? cause.message : String(cause) };
}
