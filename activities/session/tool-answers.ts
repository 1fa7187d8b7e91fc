/**
 * Answers for tool calls that do not run (declined, invalid, the turn is
 * ending), stored like results so the transcript stays well-formed: every
 * call of an answer has its tool message.
 */
import { RunEventsRepository } from '../../core/repositories/run-events.repository.js';
import { StepMessagesRepository } from '../../core/repositories/step-messages.repository.js';
import type { ToolAnswer } from '../../workflows/session.definitions.js';
import { loadTurnRun } from './turn-run.js';
import type { SessionDeps } from './types.js';

export function createToolAnswerActivities(deps: SessionDeps) {
  const { db } = deps;
  const steps = new StepMessagesRepository(db);
  const events = new RunEventsRepository(db);

  return {
    /**
     * Answers the step's calls that have no result yet without running them
     * (the turn is ending: `reason` says why), so the transcript stays well-formed.
     * Also what a turn recorded before agent tools replays (no reason).
     */
    async runToolCalls(runId: string, step: number, reason?: string): Promise<{ ran: number }> {
      const { plan } = await loadTurnRun(db, runId);
      let answered = 0;
      for (const call of await steps.toolCalls(runId, step)) {
        const stored = await events.storeToolResult({
          runId,
          threadId: plan.thread_id,
          step,
          call,
          // Without a reason: a turn from before agent tools, whose calls had no tools to run.
          output: reason ? `not run: ${reason}` : `tool "${call.name}" is not available to this agent`,
          isError: true,
        });
        if (stored) answered++;
      }
      return { ran: answered };
    },

    /** Stores answers for calls that do not run (declined, invalid, the turn is ending). */
    async answerToolCalls(args: { runId: string; step: number; answers: ToolAnswer[] }): Promise<void> {
      const { plan } = await loadTurnRun(db, args.runId);
      for (const a of args.answers)
        await events.storeToolResult({
          runId: args.runId,
          threadId: plan.thread_id,
          step: args.step,
          call: { id: a.id, name: a.name },
          output: a.output,
          isError: a.isError,
        });
    },
  };
}
