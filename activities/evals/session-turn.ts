/**
 * One replayed user turn through the ordinary converse machinery: the run is
 * stored as converse stores it (user message, `run.created`), marked as a
 * replay, and handed to its session workflow with update-with-start, as the
 * API does. The turn then runs like any other (metered on the project's key,
 * traced, with the variant's overrides); this waits for its end.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Config } from '../../core/config.js';
import type { Db } from '../../core/db/knex.js';
import { isTerminal, type DbRun, type RunOverrides } from '../../core/db/tables/index.js';
import { EvalsRepository, type RunReplay } from '../../core/repositories/evals.repository.js';
import { RunsRepository } from '../../core/repositories/runs.repository.js';
import { approvalUpdate, cancelRunUpdate } from '../../workflows/session.definitions.js';
import { heartbeating } from '../session/turn-run.js';
import { deliverTurnRun, storeTurnRun } from '../turns/session-delivery.js';
import type { RunEndNotices } from './run-end-notices.js';

/** The namespace of every scratch conversation (also what the Temporal UI can filter on). */
export const EVAL_NAMESPACE = 'eval';

export interface ReplayTurn {
  projectId: string;
  agentId: string;
  agentName: string;
  conversationId: string;
  messageId: string;
  input: unknown;
  context: Record<string, unknown>;
  overrides: RunOverrides | undefined;
  replay: RunReplay;
}

interface Deps {
  config: Config;
  db: Db;
  temporal: Client;
  notices: RunEndNotices;
}

/** The turn's run: created once (the message id is the turn's key), marked as a replay before it is delivered. */
async function storeRun(db: Db, t: ReplayTurn): Promise<DbRun> {
  const { run } = await storeTurnRun(db, {
    ...t,
    namespace: EVAL_NAMESPACE,
    content: t.input,
    source: 'eval',
  });
  await new EvalsRepository(db).setRunReplay(run.id, t.replay);
  return run;
}

/** How long a cancelled eval's turn waits for its run to be stopped before it lets go. */
const STOP_WAIT_MS = 5_000;

/**
 * The eval was cancelled while its turn ran: the run is cancelled too
 * (`interrupt`, as POST /runs/{id}/cancel would), so its model call stops
 * costing. Best effort: a session that cannot be reached is left to finish.
 */
async function stopRun(deps: Deps, run: DbRun): Promise<void> {
  const cancelling = deps.temporal.workflow
    .getHandle(run.workflow_id)
    .executeUpdate(cancelRunUpdate, { args: [{ runId: run.id, action: 'interrupt' }] });
  await Promise.race([cancelling.catch(() => undefined), new Promise((r) => setTimeout(r, STOP_WAIT_MS))]);
}

/**
 * A replayed turn that pauses for approval is approved at once: its calls are
 * answered from the recording (no side effect) or diverge, and a diverged
 * sandbox command runs only in the scratch conversation's own sandbox, when
 * the eval asked for that (`execute_diverged_tools`). A refusal (decided
 * meanwhile) is left to the next read of the run.
 */
async function approveReplay(deps: Deps, run: DbRun): Promise<void> {
  const ids = (run.pending_approvals ?? []).map((p) => String(p.id));
  if (!ids.length) return;
  await deps.temporal.workflow
    .getHandle(run.workflow_id)
    .executeUpdate(approvalUpdate, {
      args: [{ runId: run.id, approved_call_ids: ids, rejected_call_ids: [] }],
    })
    .catch(() => undefined);
}

/** Until the run has ended: woken by its terminal event's notification, else the row read every `pollMs`; cancellable. */
async function untilEnded(deps: Deps, runId: string, pollMs: number): Promise<DbRun> {
  const runs = new RunsRepository(deps.db);
  const signal = Context.current().cancellationSignal;
  const aborted = new Promise<void>((resolve) =>
    signal.addEventListener('abort', () => resolve(), { once: true }),
  );
  const stop = heartbeating();
  try {
    for (;;) {
      // Listening before the read: an end between the two still wakes the wait.
      const notice = deps.notices.wait(runId);
      let timer: NodeJS.Timeout | undefined;
      try {
        const run = await runs.findById(runId);
        if (!run) throw new Error(`run ${runId} no longer exists`);
        if (isTerminal(run.status)) return run;
        if (signal.aborted) {
          await stopRun(deps, run);
          throw signal.reason;
        }
        if (run.status === 'awaiting_approval') await approveReplay(deps, run);
        await Promise.race([
          new Promise((resolve) => (timer = setTimeout(resolve, pollMs))),
          notice.ended,
          aborted,
        ]);
      } finally {
        clearTimeout(timer);
        notice.done();
      }
    }
  } finally {
    stop();
  }
}

export async function replayTurn(deps: Deps, t: ReplayTurn, pollMs: number): Promise<DbRun> {
  const run = await storeRun(deps.db, t);
  if (isTerminal(run.status)) return run;
  await deliverTurnRun(deps, run, {
    conversationId: t.conversationId,
    namespace: EVAL_NAMESPACE,
    agentName: t.agentName,
  });
  // Not the Update's answer: the session gives it only once it has closed the turn, tens of
  // milliseconds after the run's end is written (and notified).
  return untilEnded(deps, run.id, pollMs);
}
