/**
 * A call of a remote A2A agent's tool, inside the session's tool activity
 * (`runMcpTool`, which hands it here): the arguments checked, the call
 * announced, the remote task sent once and followed (activities/tools/a2a-task-call.ts)
 * while the activity heartbeats, and its answer stored as the call's result.
 * A failure to reach the remote is retried by the activity (the message is
 * never sent twice); the last attempt, and anything the remote refused,
 * goes back to the model.
 */
import { Context } from '@temporalio/activity';
import { A2AError } from '@a2a-js/sdk/errors';
import type { ToolCall } from '../../core/llm/types.js';
import { A2aAgentsRepository } from '../../core/repositories/a2a-agents.repository.js';
import { RunEventsRepository } from '../../core/repositories/run-events.repository.js';
import { metrics } from '../../core/telemetry/metrics.js';
import { errorName } from '../../core/telemetry/metrics/genai.js';
import type { McpToolOutcome } from '../../workflows/session.definitions.js';
import { runA2aTask } from '../tools/a2a-task-call.js';
import { errorText, TOOL_ATTEMPTS, type StoreResult } from './tool-results.js';
import type { RunTools } from './tools.js';
import { heartbeating } from './turn-run.js';
import type { SessionDeps, TurnPlan } from './types.js';

type Offered = RunTools['offered'][number];

export interface A2aCallAt {
  runId: string;
  step: number;
  call: ToolCall;
  args: Record<string, unknown>;
  plan: TurnPlan;
  offered: Offered;
  store: StoreResult;
}

/** The arguments' own problems, said to the model. */
function argumentProblem(args: Record<string, unknown>): string | undefined {
  if (typeof args.message !== 'string' || args.message.trim() === '')
    return '"message" must be a non-empty text';
  if (args.task_id !== undefined && (typeof args.task_id !== 'string' || args.task_id === ''))
    return '"task_id" must be the non-empty task id the remote agent gave';
  return undefined;
}

export async function runA2aCall(deps: SessionDeps, at: A2aCallAt): Promise<McpToolOutcome> {
  const { runId, step, call, args, offered, store } = at;
  const problem = argumentProblem(args);
  if (problem) {
    await store(problem, true);
    return { is_error: true };
  }
  const ctx = Context.current();
  const events = new RunEventsRepository(deps.db);
  const data = { step, id: call.id, name: call.name, server: offered.server_name, attempt: ctx.info.attempt };
  await events.append(runId, 'tool_call.started', data, `${step}.tool.${call.id}.started`);
  const row = await new A2aAgentsRepository(deps.db).findById(offered.server_id!);
  if (!row) {
    await store(`tool "${call.name}" failed: its A2A agent no longer exists`, true);
    return { is_error: true };
  }
  let state = 'SENDING';
  const stop = heartbeating(() => ({ a2a_state: state }));
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  try {
    const result = await runA2aTask(deps.db, {
      conn: {
        cardUrl: row.card_url,
        headers: row.headers_enc ? deps.secrets.decryptJson<Record<string, string>>(row.headers_enc) : {},
      },
      a2aAgentId: row.id,
      toolName: call.name,
      skillId: offered.tool ?? 'delegate',
      runId,
      callKey: `${step}:${call.id}`,
      text: args.message as string,
      ...(typeof args.task_id === 'string' ? { continueTaskId: args.task_id } : {}),
      retried: ctx.info.attempt > 1,
      timeoutMs: deps.config.session.mcpToolTimeoutMs,
      pollMs: 500,
      signal: ctx.cancellationSignal,
      onState: (s) => {
        state = s;
      },
    });
    const { output, isError, ...extras } = result;
    metrics().session.toolCall('a2a', seconds(), isError ? 'tool_error' : undefined);
    await store(output, isError, { server: offered.server_name, tool: offered.tool, a2a: extras });
    return { is_error: isError };
  } catch (err) {
    metrics().session.toolCall('a2a', seconds(), errorName(err));
    if (ctx.cancellationSignal.aborted) throw err;
    // The remote answered with an error (a refusal): retrying cannot help. Anything else may be an outage.
    if (!(err instanceof A2AError) && ctx.info.attempt < TOOL_ATTEMPTS) throw err;
    await store(`tool "${call.name}" failed: ${errorText(err)}`, true, { server: offered.server_name });
    return { is_error: true };
  } finally {
    stop();
  }
}
