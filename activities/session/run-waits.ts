/**
 * Recording a run's waits other than approval (for budget, for a decision
 * on a tool call whose outcome is unknown, for an MCP server's authorization,
 * for a person's input): the workflow holds the wait (a condition and
 * timers); these record its start and end for readers of the run, each once
 * per key, in one transaction with its event. A tool call that waits while
 * connected (an MCP server's question) records its own through the same
 * functions.
 */
import type { Db } from '../../core/db/knex.js';
import { isTerminal } from '../../core/db/tables/index.js';
import { RunEventsRepository } from '../../core/repositories/run-events.repository.js';
import { TurnsRepository } from '../../core/repositories/turns.repository.js';
import type { PauseRunArgs, ResumeRunArgs } from '../../workflows/session.definitions.js';
import { emitRunWebhooks } from '../webhooks/run-webhooks.js';
import type { SessionDeps } from './types.js';

const STATUS = {
  budget: 'awaiting_budget',
  decision: 'awaiting_decision',
  authorization: 'awaiting_authorization',
  input: 'awaiting_input',
} as const;

/** The run waits: status `awaiting_<reason>`, its `pause`, and `run.paused {reason, details}`. */
export async function recordPause(db: Db, args: PauseRunArgs): Promise<void> {
  const { runId, step, reason, details, timeoutAt, key } = args;
  const turns = new TurnsRepository(db);
  const events = new RunEventsRepository(db);
  const status = STATUS[reason];
  const since = new Date().toISOString();
  const timeout_at = timeoutAt !== null ? new Date(timeoutAt).toISOString() : null;
  await turns.transaction(async (trx) => {
    const run = await turns.lock(runId, trx);
    if (!run || isTerminal(run.status)) return;
    await turns.wait(runId, status, { reason, since, timeout_at, details }, trx);
    await events.append(
      runId,
      'run.paused',
      { status, step, reason, details, timeout_at },
      `${key}.paused`,
      trx,
    );
  });
  await emitRunWebhooks(db, runId, 'run.paused', key);
}

/** The wait has ended: running again, and `run.resumed {reason, by}`. */
export async function recordResume(db: Db, args: ResumeRunArgs): Promise<void> {
  const { runId, step, reason, by, key, details } = args;
  const turns = new TurnsRepository(db);
  const events = new RunEventsRepository(db);
  await turns.transaction(async (trx) => {
    const run = await turns.lock(runId, trx);
    if (!run || isTerminal(run.status) || run.status !== STATUS[reason]) return;
    await turns.endWait(runId, trx);
    const data = { status: 'running', step, reason, by, ...(details ?? {}) };
    await events.append(runId, 'run.resumed', data, `${key}.resumed`, trx);
  });
}

export function createRunWaitActivities(deps: SessionDeps) {
  const { db } = deps;
  return {
    pauseRun: (args: PauseRunArgs): Promise<void> => recordPause(db, args),
    resumeRun: (args: ResumeRunArgs): Promise<void> => recordResume(db, args),
  };
}
