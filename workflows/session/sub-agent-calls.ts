import {
  CancellationScope,
  isCancellation,
  ParentClosePolicy,
  startChild,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import type { CancelAction, ToolAnswer, ToolCallPlan } from '../session.definitions.js';
import {
  cancelSubAgentCallSignal,
  SUB_AGENT_CALL_WORKFLOW_TYPE,
  subAgentCallWorkflowId,
  type SubAgentCallInput,
  type SubAgentCallResult,
} from '../sub-agent-call.definitions.js';

/** Marks turns that called a sub-agent (a child workflow per call). */
export const SUB_AGENTS_PATCH = 'sub-agents';

type Answer = (args: { runId: string; step: number; answers: ToolAnswer[] }) => Promise<void>;

/**
 * A turn's sub-agent calls: each runs as a child workflow
 * (sub-agent-call.workflow.ts) that stores its answer as the call's result.
 * The calls of one step run at the same time; a turn makes at most
 * `maxCalls` of them (the ones past it are answered with an error).
 */
export class SubAgentCalls {
  private made = 0;

  constructor(
    private readonly answerToolCalls: Answer,
    /** The session's tool heartbeat timeout, which the call's wait for the sub-agent's run uses too. */
    private readonly heartbeatTimeoutMs: number | undefined,
  ) {}

  /** A new turn: its count starts again. */
  reset(): void {
    this.made = 0;
  }

  /**
   * One call, until its child workflow has ended. When the turn is
   * cancelled meanwhile, the child is told how (`cancelAction()`) and waited
   * for, so the sub-agent's run has ended before the caller's does.
   */
  async call(
    runId: string,
    step: number,
    call: ToolCallPlan,
    cancelAction: () => CancelAction,
  ): Promise<void> {
    const max = call.maxCalls ?? 0;
    const answer = (output: string) =>
      this.answerToolCalls({
        runId,
        step,
        answers: [{ id: call.id, name: call.name, output, isError: true }],
      });
    if (this.made >= max)
      return answer(
        `not run: this turn has made its ${max} sub-agent calls (SUB_AGENT_MAX_FANOUT); answer with what you have`,
      );
    this.made++;
    const input: SubAgentCallInput = {
      parentRunId: runId,
      step,
      callId: call.id,
      ...(this.heartbeatTimeoutMs !== undefined ? { heartbeatTimeoutMs: this.heartbeatTimeoutMs } : {}),
    };
    // Started outside the turn's scope: the turn's cancel reaches the child as a signal saying how.
    const child: ChildWorkflowHandle<(i: SubAgentCallInput) => Promise<SubAgentCallResult>> =
      await CancellationScope.nonCancellable(() =>
        startChild(SUB_AGENT_CALL_WORKFLOW_TYPE, {
          workflowId: subAgentCallWorkflowId(runId, call.id),
          args: [input],
          parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        }),
      );
    try {
      await Promise.race([child.result(), CancellationScope.current().cancelRequested]);
    } catch (err) {
      if (!isCancellation(err)) return answer(`the sub-agent call failed: ${(err as Error).message}`);
      await CancellationScope.nonCancellable(async () => {
        await child.signal(cancelSubAgentCallSignal, { action: cancelAction() }).catch(() => undefined);
        await child.result().catch(() => undefined);
      });
      throw err;
    }
  }
}

/** Waits for every call started, then throws the first failure (a cancelled turn's). */
export async function settle(calls: Array<Promise<void>>): Promise<void> {
  const failed = (await Promise.allSettled(calls)).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}
