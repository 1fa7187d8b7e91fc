/**
 * Turns started from the worker (crons, delayed turns): store a run and hand
 * it to its session, hand over a run the API stored earlier, and wait for a
 * run's end. Each is idempotent: the run is keyed by its message id, and the
 * session's Update by the same id.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Config } from '../../core/config.js';
import type { Db } from '../../core/db/knex.js';
import { isTerminal, type DbRun } from '../../core/db/tables/index.js';
import type { Logger } from '../../core/logger.js';
import { AgentsRepository } from '../../core/repositories/agents.repository.js';
import { RunsRepository } from '../../core/repositories/runs.repository.js';
import type { DelayedTurnResult } from '../../workflows/turns.definitions.js';
import { cancelRunUpdate } from '../../workflows/session.definitions.js';
import { heartbeating } from '../session/turn-run.js';
import { deliverTurnRun, storeTurnRun, TurnNotStoredError, type TurnRequest } from './session-delivery.js';

export interface TurnActivityDeps {
  config: Config;
  db: Db;
  logger: Logger;
  temporal?: Client;
}

/** A run handed to its session (or found ended already). */
export interface StartedTurn {
  runId: string;
  conversationId: string;
  threadId: string;
  status: string;
}

/** How often a wait for a run's end reads the run. */
const RUN_END_POLL_MS = 500;

export function createTurnActivities(deps: TurnActivityDeps) {
  const runs = new RunsRepository(deps.db);
  const agents = new AgentsRepository(deps.db);

  function temporal(): Client {
    if (!deps.temporal)
      throw ApplicationFailure.nonRetryable('the worker has no Temporal client', 'no_temporal_client');
    return deps.temporal;
  }

  async function agentName(agentId: string): Promise<string> {
    return (await agents.findById(agentId))?.name ?? agentId;
  }

  /** Stores the turn's run (once per message id) and, unless it has ended, delivers it. */
  async function startTurn(t: TurnRequest): Promise<StartedTurn> {
    let stored;
    try {
      stored = await storeTurnRun(deps.db, t);
    } catch (err) {
      // Retrying cannot bring back a deleted agent or make a used message id free.
      if (err instanceof TurnNotStoredError)
        throw ApplicationFailure.nonRetryable(err.message, 'turn_not_stored');
      throw err;
    }
    const { run, namespace } = stored;
    if (!isTerminal(run.status))
      await deliverTurnRun({ config: deps.config, temporal: temporal() }, run, {
        conversationId: t.conversationId,
        namespace,
        agentName: await agentName(t.agentId),
      });
    return { runId: run.id, conversationId: t.conversationId, threadId: run.thread_id, status: run.status };
  }

  /** Cancels the run (`interrupt`), best effort: the session may be gone. */
  async function stopRun(run: DbRun): Promise<void> {
    await temporal()
      .workflow.getHandle(run.workflow_id)
      .executeUpdate(cancelRunUpdate, { args: [{ runId: run.id, action: 'interrupt' }] })
      .catch((err: unknown) => deps.logger.warn({ err, runId: run.id }, 'could not cancel the run'));
  }

  return {
    startTurn,

    /**
     * A run the API stored, handed to its session now (a delayed turn). A run
     * that has ended meanwhile (cancelled) or is gone is not delivered.
     */
    async deliverStoredRun(runId: string): Promise<DelayedTurnResult> {
      const view = await runs.findView(runId);
      if (!view) return { delivered: false, reason: 'the run no longer exists' };
      if (isTerminal(view.status)) return { delivered: false, reason: `the run is ${view.status}` };
      if (!view.agent_id) return { delivered: false, reason: 'the run’s agent no longer exists' };
      const found = await runs.lookup(
        view.project_id,
        view.agent_id,
        view.conversation_client_id,
        view.message_id,
      );
      const run = found?.run;
      if (!run) return { delivered: false, reason: 'the run no longer exists' };
      await deliverTurnRun({ config: deps.config, temporal: temporal() }, run, {
        conversationId: view.conversation_client_id,
        namespace: found.conversation?.namespace ?? 'default',
        agentName: view.agent_name ?? view.agent_id,
      });
      return { delivered: true };
    },

    /**
     * Until the run has ended, heartbeating. Cancelled (a cron's next run
     * under `cancel_other`), it cancels the run (`interrupt`) first.
     */
    async awaitRunEnd(runId: string): Promise<{ status: string }> {
      const signal = Context.current().cancellationSignal;
      const stop = heartbeating();
      try {
        for (;;) {
          const run = await runs.findById(runId);
          if (!run) return { status: 'deleted' };
          if (isTerminal(run.status)) return { status: run.status };
          if (signal.aborted) {
            // Cancelled by the workflow (a newer firing under cancel_other): the run goes too. A worker
            // shutting down leaves the run alone: the wait resumes on another worker.
            if (Context.current().cancellationDetails?.cancelRequested) await stopRun(run);
            throw signal.reason;
          }
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, RUN_END_POLL_MS);
            signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
          });
        }
      } finally {
        stop();
      }
    },
  };
}

export type TurnActivities = ReturnType<typeof createTurnActivities>;
