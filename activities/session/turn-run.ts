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

/** Heartbeats the current activity every second (with `details()` when given) until the returned stop is called. */
export function heartbeating(details?: () => unknown): () => void {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(details?.()), 1_000);
  ctx.heartbeat(details?.());
  return () => clearInterval(timer);
}
