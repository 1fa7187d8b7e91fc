/**
 * Small pieces every session activity uses: the run with its pinned plan,
 * and a heartbeat while an activity waits on something slow.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Db } from '../../core/db/knex.js';
import type { DbRun } from '../../core/db/tables/index.js';
import { RunsRepository } from '../../core/repositories/runs.repository.js';
import type { TurnPlan } from './types.js';

/** The run and the plan its first model call pinned; non-retryable when either is missing. */
export async function loadTurnRun(db: Db, runId: string): Promise<{ run: DbRun; plan: TurnPlan }> {
  const run = await new RunsRepository(db).findById(runId);
  if (!run) throw ApplicationFailure.nonRetryable(`run ${runId} no longer exists`, 'run_not_found');
  if (!run.plan) throw ApplicationFailure.nonRetryable(`run ${runId} has no plan`, 'turn_not_started');
  return { run, plan: run.plan as unknown as TurnPlan };
}

/**
 * How often a running activity heartbeats. Temporal tells an activity it was
 * cancelled in the answer to a heartbeat, so this (with the worker's
 * `maxHeartbeatThrottleInterval`) bounds how soon POST /runs/{id}/cancel
 * aborts a model call or a tool call: well within a second.
 */
export const HEARTBEAT_INTERVAL_MS = 400;

/** Heartbeats the current activity every HEARTBEAT_INTERVAL_MS (with `details()` when given) until the returned stop is called. */
export function heartbeating(details?: () => unknown): () => void {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(details?.()), HEARTBEAT_INTERVAL_MS);
  ctx.heartbeat(details?.());
  return () => clearInterval(timer);
}
