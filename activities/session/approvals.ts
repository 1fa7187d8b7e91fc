/**
 * The steps of a turn that waits for a person: the run pauses with its
 * pending calls, and each decision is recorded once; with the last one the
 * run resumes. The workflow holds the waiting itself (a timer and a
 * condition); these record it for readers of the run.
 */
import type { Db } from '../../core/db/knex.js';
import { isTerminal, type DbRun } from '../../core/db/tables/index.js';
import { RunEventsRepository } from '../../core/repositories/run-events.repository.js';
import { StepMessagesRepository } from '../../core/repositories/step-messages.repository.js';
import { TurnsRepository } from '../../core/repositories/turns.repository.js';
import type { ApprovalDecision } from '../../workflows/session.definitions.js';
import type { RunTools } from './tools.js';
import { loadTurnRun } from './turn-run.js';
import type { SessionDeps } from './types.js';
import { emitRunWebhooks } from '../webhooks/run-webhooks.js';

interface Decisions {
  runId: string;
  step: number;
  decisions: ApprovalDecision[];
  remaining: string[];
}

/** The calls waiting for a decision, as `pending_approvals` and `run.paused` show them. */
async function pendingCalls(db: Db, runId: string, step: number, callIds: string[]) {
  const { run } = await loadTurnRun(db, runId);
  const tools = run.tools as RunTools | null;
  const calls = await new StepMessagesRepository(db).toolCalls(runId, step);
  return callIds.map((id) => {
    const call = calls.find((c) => c.id === id);
    const offered = tools?.offered.find((t) => t.name === call?.name);
    return {
      id,
      step,
      name: call?.name ?? null,
      arguments: call?.arguments ?? null,
      kind: offered?.kind ?? null,
      ...(offered?.server_name ? { server: offered.server_name, tool: offered.tool } : {}),
    };
  });
}

/**
 * The run's approvals with these decisions added (each call's first decision
 * counts), what still waits (null: nothing, the run resumes), and, on
 * resuming, what `run.resumed` says was decided at this step.
 */
function decide(run: DbRun, args: Decisions) {
  const { step } = args;
  const known = new Set(run.approvals.map((a) => `${String(a.step)}/${String(a.id)}`));
  const at = new Date().toISOString();
  const added = args.decisions.filter((d) => !known.has(`${step}/${d.id}`)).map((d) => ({ ...d, step, at }));
  const approvals = [...run.approvals, ...added];
  if (args.remaining.length > 0) {
    const pending = (run.pending_approvals ?? []).filter((p) => args.remaining.includes(String(p.id)));
    return { approvals, pending, resumed: undefined };
  }
  const decided = approvals.filter((a) => a.step === step);
  const resumed = {
    status: 'running',
    step,
    approved: decided.filter((a) => a.decision === 'approved').map((a) => a.id),
    rejected: decided.filter((a) => a.decision === 'rejected').map((a) => ({ id: a.id, by: a.by })),
  };
  return { approvals, pending: null, resumed };
}

export function createApprovalActivities(deps: SessionDeps) {
  const { db } = deps;
  const turns = new TurnsRepository(db);
  const events = new RunEventsRepository(db);

  return {
    /** The turn waits for a person: status awaiting_approval with the pending calls, and `run.paused`. */
    async pauseForApproval(args: { runId: string; step: number; callIds: string[] }): Promise<void> {
      const { runId, step } = args;
      const pending = await pendingCalls(db, runId, step, args.callIds);
      await turns.transaction(async (trx) => {
        const run = await turns.lock(runId, trx);
        if (!run || isTerminal(run.status)) return;
        await turns.pause(runId, pending, trx);
        await events.append(
          runId,
          'run.paused',
          { status: 'awaiting_approval', step, pending },
          `${step}.paused`,
          trx,
        );
      });
      await emitRunWebhooks(db, runId, 'run.paused', `${step}`);
    },

    /**
     * Records decisions (once each) and what still waits. When nothing does,
     * the run is running again and `run.resumed` says what was decided, in the
     * same transaction, so whoever reads the run next sees it resumed.
     */
    async recordApprovals(args: Decisions): Promise<void> {
      const { runId, step } = args;
      await turns.transaction(async (trx) => {
        const run = await turns.lock(runId, trx);
        if (!run || isTerminal(run.status)) return;
        const { approvals, pending, resumed } = decide(run, args);
        await turns.setApprovals(runId, approvals, pending, trx);
        if (resumed) await events.append(runId, 'run.resumed', resumed, `${step}.resumed`, trx);
      });
    },
  };
}
