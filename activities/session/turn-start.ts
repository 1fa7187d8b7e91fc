/**
 * How a model step begins. The turn starts with its first model call (no
 * separate step, so nothing stands between the Update and the model): the
 * plan is resolved and pinned here, and the workflow is told when something
 * must happen before the call (summarize the thread, list the MCP tools).
 */
import { isTerminal } from '../../core/db/tables/index.js';
import { ThreadHistoryRepository } from '../../core/repositories/thread-history.repository.js';
import { TurnsRepository, type TurnStartRow } from '../../core/repositories/turns.repository.js';
import type { ModelStepResult } from '../../workflows/session.definitions.js';
import { nonRetryable } from './failures.js';
import { needsSummary } from './history.js';
import { pinPlan, resolvePlan } from './plan.js';
import { hasA2aAgents } from '../tools/a2a-tools.js';
import { metrics } from '../../core/telemetry/metrics.js';
import { closeRun } from './run-outcome.js';
import type { SessionDeps, TurnPlan } from './types.js';

export type StepStart =
  /** The step ends here: the workflow is told what to do first, or that the turn is over. */
  | { kind: 'result'; result: ModelStepResult }
  /** The model is called with this plan; `pinning` settles once a new plan is stored (undefined: already stored). */
  | { kind: 'call'; row: TurnStartRow; plan: TurnPlan; pinning: Promise<TurnPlan> | undefined };

const ended = (kind: 'over' | 'summarize' | 'list_tools'): StepStart => ({
  kind: 'result',
  result: { kind },
});

export async function startStep(
  deps: SessionDeps,
  runId: string,
  step: number,
  summarized: boolean,
): Promise<StepStart> {
  const history = new ThreadHistoryRepository(deps.db);
  const row = await new TurnsRepository(deps.db).startRow(runId);
  if (!row || isTerminal(row.status)) return ended('over');
  let plan = row.plan as unknown as TurnPlan | null;
  let pinning: Promise<TurnPlan> | undefined;
  if (!plan) {
    if (step !== 1 || summarized) throw nonRetryable('turn_not_started', `run ${runId} has no plan`);
    const start = await resolvePlan(deps, row);
    if (start.kind === 'fail') {
      // A turn refused at its start still began (and ends failed): counted once, by whoever closed it.
      if (await closeRun(deps.db, { runId, status: 'failed', error: start.error }))
        metrics().session.turnStarted();
      return ended('over');
    }
    plan = start.plan;
    if (plan.summarizer_type === 'llm') {
      // Pin first, then decide whether to summarize before the call.
      plan = await pinPlan(deps.db, row, plan, start.warnings);
      if (await needsSummary(history, plan, runId)) return ended('summarize');
    } else pinning = pinPlan(deps.db, row, plan, start.warnings);
  } else if (step === 1 && !summarized && plan.summarizer_type === 'llm') {
    // A retry of the first step after its plan was pinned.
    if (await needsSummary(history, plan, runId)) return ended('summarize');
  }
  if ((plan.mcp_servers.length || hasA2aAgents(plan)) && !row.tools) {
    // The MCP servers' and remote A2A agents' tools are listed once per turn, in their own activity.
    await pinning;
    return ended('list_tools');
  }
  return { kind: 'call', row, plan, pinning };
}
