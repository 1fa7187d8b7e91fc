import {
  CancellationScope,
  isCancellation,
  sleep,
  type ActivityFunctionWithOptions,
  type ActivityOptions,
} from '@temporalio/workflow';
import type {
  McpTaskArgs,
  McpTaskPoll,
  McpCallTask,
  ToolAnswer,
  ToolCallPlan,
} from '../session.definitions.js';

/** The activities following a task takes, as the workflow proxies them. */
export interface McpTaskActivities {
  pollMcpTask: ActivityFunctionWithOptions<(args: McpTaskArgs) => Promise<McpTaskPoll>>;
  cancelMcpTask: ActivityFunctionWithOptions<(args: McpTaskArgs) => Promise<boolean>>;
  answerToolCalls: (args: { runId: string; step: number; answers: ToolAnswer[] }) => Promise<void>;
  toolCallOptions: ActivityOptions;
}

/** What the model hears of a task that outlived its deadline. */
function overdueAnswer(call: ToolCallPlan, task: McpCallTask): string {
  return (
    `the tool "${call.name}" ran as a task on its MCP server and did not finish within ${task.timeoutMs} ms ` +
    '(its time to live, or MCP_TASK_MAX_MS); the task was cancelled'
  );
}

/**
 * Follows a call its MCP server runs as a task: a durable timer, then one
 * poll (`pollMcpTask`, which stores the result once the task is over), again
 * until it is over. Nothing runs between polls, so a worker restart loses
 * nothing. Past the deadline (the task's ttl, at most MCP_TASK_MAX_MS) the
 * task is cancelled and the model told; a cancelled run cancels it too
 * (`tasks/cancel`, best effort) before the cancellation goes on.
 */
export async function followMcpTask(
  activities: McpTaskActivities,
  runId: string,
  step: number,
  call: ToolCallPlan,
  task: McpCallTask,
): Promise<void> {
  const { pollMcpTask, cancelMcpTask, answerToolCalls, toolCallOptions } = activities;
  const args: McpTaskArgs = { runId, step, callId: call.id, task };
  // One poll is a quick question; a cancel is tried once (the run or the call is ending anyway).
  const pollOptions = {
    ...toolCallOptions,
    startToCloseTimeout: '2 minutes',
    summary: `MCP task ${call.name}`,
  };
  const cancelOptions = {
    ...toolCallOptions,
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 1 },
    summary: `MCP task ${call.name}: cancel`,
  };
  // Best effort: a cancel that fails must not fail the turn.
  const cancel = () =>
    cancelMcpTask.executeWithOptions(cancelOptions, [args]).catch((err: unknown) => {
      if (isCancellation(err)) throw err;
      return false;
    });
  const deadline = Date.now() + task.timeoutMs;
  let waitMs = task.pollMs;
  let message: string | undefined;
  try {
    for (let left = task.timeoutMs; left > 0; left = deadline - Date.now()) {
      await sleep(Math.min(waitMs, left));
      const polled = await pollMcpTask.executeWithOptions(pollOptions, [
        { ...args, ...(message !== undefined ? { lastMessage: message } : {}) },
      ]);
      if (polled.kind === 'done') return;
      waitMs = polled.pollMs;
      message = polled.message ?? message;
    }
  } catch (err) {
    if (isCancellation(err)) await CancellationScope.nonCancellable(cancel);
    throw err;
  }
  await cancel();
  await answerToolCalls({
    runId,
    step,
    answers: [{ id: call.id, name: call.name, output: overdueAnswer(call, task), isError: true }],
  });
}
