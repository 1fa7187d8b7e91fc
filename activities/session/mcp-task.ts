/**
 * The activities that follow an MCP call its server runs as a task (the MCP
 * tasks extension): `pollMcpTask`, one `tasks/get` between the session's
 * durable timers, storing the result once the task is over exactly as
 * `runMcpTool` stores a call's; and `cancelMcpTask`, a best-effort
 * `tasks/cancel` when the run is cancelled or the task outlives its deadline.
 * The task's id lives in the workflow's state, so a worker restart loses
 * nothing and the tool is never called twice.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { publicBaseUrl } from '../../core/mcp/oauth/index.js';
import { pollDelay, type McpTaskStarted } from '../../core/mcp/tasks.js';
import { RunEventsRepository } from '../../core/repositories/run-events.repository.js';
import { StepMessagesRepository } from '../../core/repositories/step-messages.repository.js';
import { metrics } from '../../core/telemetry/metrics.js';
import type { McpCallTask, McpTaskArgs, McpTaskPoll } from '../../workflows/session.definitions.js';
import { cancelMcpTask, pollMcpTask, type McpTaskRef } from '../tools/mcp-task-calls.js';
import { resultStore } from './tool-results.js';
import type { RunTools } from './tools.js';
import { heartbeating, loadTurnRun } from './turn-run.js';
import type { SessionDeps } from './types.js';

/** One tasks/get or tasks/cancel never waits longer than this (a poll is a quick question). */
const TASK_REQUEST_TIMEOUT_MS = 30_000;

/**
 * What runMcpTool answers for a call its server runs as a task: the session
 * follows it until the task's time to live, at most MCP_TASK_MAX_MS.
 */
export function callTaskOutcome(task: McpTaskStarted, maxMs: number, startedAt: number): McpCallTask {
  return {
    kind: 'task',
    serverId: task.serverId,
    taskId: task.taskId,
    pollMs: task.pollIntervalMs,
    timeoutMs: Math.min(task.ttlMs ?? maxMs, maxMs),
    startedAt,
  };
}

export function createMcpTaskActivities(deps: SessionDeps) {
  const { db } = deps;
  const steps = new StepMessagesRepository(db);
  const events = new RunEventsRepository(db);
  const access = { db, secrets: deps.secrets, publicUrl: publicBaseUrl(deps.config) };
  const { session } = deps.config;
  const bounds = { minMs: session.mcpTaskPollMinMs, maxMs: session.mcpTaskPollMaxMs };
  const requestTimeoutMs = Math.min(session.mcpToolTimeoutMs, TASK_REQUEST_TIMEOUT_MS);

  /** The run, the call and the task as the tools layer names it. */
  async function taskOf({ runId, step, callId, task }: McpTaskArgs) {
    const { run, plan } = await loadTurnRun(db, runId);
    const call = (await steps.toolCalls(runId, step)).find((c) => c.id === callId);
    if (!call)
      throw ApplicationFailure.nonRetryable(`step ${step} has no call ${callId}`, 'tool_call_not_found');
    const offered = (run.tools as RunTools | null)?.offered.find(
      (t) => t.name === call.name && t.kind === 'mcp',
    );
    const ref: McpTaskRef = {
      serverId: task.serverId,
      serverName: offered?.server_name ?? '',
      tool: offered?.tool ?? call.name,
      taskId: task.taskId,
    };
    return { run, plan, call, ref };
  }

  return {
    /**
     * One poll of the call's task. Over: the result is stored (once) and the
     * session goes on as after any call. Still working: when to poll next,
     * and a `tool_call.progress` event when the server's status message
     * changed. A server that could not be asked counts as still working;
     * the session's deadline bounds that.
     */
    async pollMcpTask(args: McpTaskArgs): Promise<McpTaskPoll> {
      const { runId, step, callId, task } = args;
      const stored = await steps.toolResult(runId, step, callId);
      if (stored) return { kind: 'done', is_error: Boolean(stored.is_error) };
      const { run, plan, call, ref } = await taskOf(args);
      const ctx = Context.current();
      const stop = heartbeating();
      const state = await pollMcpTask(access, ref, {
        timeoutMs: requestTimeoutMs,
        signal: ctx.cancellationSignal,
        endUserId: run.end_user_id ?? null,
      }).finally(stop);
      if (state.state === 'done') {
        const { output, isError, extras } = state.result;
        metrics().session.toolCall(
          'mcp',
          (Date.now() - task.startedAt) / 1000,
          isError ? 'tool_error' : undefined,
        );
        const store = resultStore(events, runId, plan.thread_id, step, call);
        await store(output, isError, {
          server: ref.serverName,
          tool: ref.tool,
          task_id: ref.taskId,
          ...extras,
        });
        return { kind: 'done', is_error: isError };
      }
      if (state.state === 'unreachable')
        ctx.log.warn('could not poll an MCP task', { task_id: ref.taskId, reason: state.reason });
      const message = state.state === 'working' ? state.message : undefined;
      if (message !== undefined && message !== args.lastMessage) {
        const data = {
          step,
          id: call.id,
          name: call.name,
          task_id: ref.taskId,
          task_status: 'working',
          message,
        };
        await events.append(runId, 'tool_call.progress', data).catch((err: unknown) => {
          ctx.log.warn('could not record a progress event', { error: String(err) });
        });
      }
      const hint = state.state === 'working' ? state.pollIntervalMs : undefined;
      return {
        kind: 'working',
        pollMs: pollDelay(hint, bounds),
        ...(message !== undefined ? { message } : {}),
      };
    },

    /** Asks the task's server to stop it (best effort: whether it acknowledged). */
    async cancelMcpTask(args: McpTaskArgs): Promise<boolean> {
      const { run, ref } = await taskOf(args);
      return cancelMcpTask(access, ref, {
        timeoutMs: requestTimeoutMs,
        signal: Context.current().cancellationSignal,
        endUserId: run.end_user_id ?? null,
      });
    },
  };
}
