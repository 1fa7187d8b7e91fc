import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
  executeChild,
  isCancellation,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { EvalActivities } from '../activities/evals/eval-activities.js';
import { activityDefaults } from '../temporal.config.js';
import {
  evalCaseWorkflowId,
  evalReplayTaskQueue,
  type EvalCaseInput,
  type EvalInput,
} from './eval.definitions.js';

const bookkeeping = proxyActivities<EvalActivities>(activityDefaults.persistence);

/** A case's turns wait for their session to run them (model and tool calls included); a dead worker's case moves on after its heartbeat timeout. */
function turnActivities(heartbeatTimeoutMs: number) {
  return proxyActivities<EvalActivities>({
    taskQueue: evalReplayTaskQueue(workflowInfo().taskQueue),
    ...activityDefaults.modelCall,
    // A case may hold many long turns; a dead worker is noticed by the heartbeat, not this.
    startToCloseTimeout: '7 days',
    heartbeatTimeout: heartbeatTimeoutMs,
    // A cancelled eval waits for its turn to stop the run under way.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
}

/** The failure as the eval reports it. */
function evalError(err: unknown): { code: string; message: string } {
  let cause: unknown = err;
  while (cause instanceof ChildWorkflowFailure || cause instanceof ActivityFailure) cause = cause.cause;
  if (cause instanceof ApplicationFailure) return { code: cause.type ?? 'error', message: cause.message };
  return { code: 'error', message: cause instanceof Error ? cause.message : String(cause) };
}

/**
 * One eval: its cases × variants, each a child workflow, at most
 * `concurrency` at once; then its end (completed, failed, or cancelled by
 * DELETE /evals/{id}, which cancels this workflow and its children).
 * Deterministic: every read and write is an activity.
 */
export async function evalWorkflow(input: EvalInput): Promise<void> {
  const { evalId } = input;
  let end: { status: 'completed' | 'failed' | 'cancelled'; error?: { code: string; message: string } } = {
    status: 'completed',
  };
  try {
    // An eval cancelled before it started has no cases: it only ends (and is announced).
    const plan = await bookkeeping.startEval(evalId);
    const jobs = plan.cases.flatMap((turns, caseIndex) =>
      Array.from({ length: plan.variants }, (_, variantIndex) => ({ caseIndex, variantIndex, turns })),
    );
    let next = 0;
    const lane = async () => {
      while (next < jobs.length) {
        const job = jobs[next++]!;
        if (job.turns === 0) continue;
        const args: EvalCaseInput = {
          evalId,
          ...job,
          pollMs: input.pollMs,
          heartbeatTimeoutMs: input.heartbeatTimeoutMs,
        };
        await executeChild(evalCaseWorkflow, {
          workflowId: evalCaseWorkflowId(evalId, job.caseIndex, job.variantIndex),
          args: [args],
        });
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(plan.concurrency, jobs.length)) }, lane));
  } catch (err) {
    end = isCancellation(err) ? { status: 'cancelled' } : { status: 'failed', error: evalError(err) };
  }
  await CancellationScope.nonCancellable(() => bookkeeping.finishEval({ evalId, ...end }));
}

/**
 * One case (a recorded conversation, or a dataset row) replayed against one
 * variant in its scratch conversation: one activity, which runs the case's
 * turns in order and writes each once (a diverged turn ends the case); after
 * a worker dies its retry goes on from the first turn not written.
 */
export async function evalCaseWorkflow(input: EvalCaseInput): Promise<void> {
  await turnActivities(input.heartbeatTimeoutMs).replayEvalCase(input);
}
