/**
 * The `runMcpTool` activity: one MCP tool call. A worker crash mid-call
 * repeats the call (at least once), and only a call that never reached the
 * server is retried otherwise; every attempt carries the same idempotency key
 * (`<run>:<step>:<call id>`, in the request's `_meta`), so a server that
 * honours it performs the call's side effect once.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { McpAuthorizationRequired, McpConnectionError } from '../../core/mcp/errors.js';
import { publicBaseUrl } from '../../core/mcp/oauth/index.js';
import { RunEventsRepository } from '../../core/repositories/run-events.repository.js';
import { StepMessagesRepository } from '../../core/repositories/step-messages.repository.js';
import type { ToolCall } from '../../core/llm/types.js';
import type { InputAnswer, McpToolOutcome, ToolCallArgs } from '../../workflows/session.definitions.js';
import { callMcpTool, type McpCallResult, type OfferedMcpTool } from '../tools/mcp-tools.js';
import type { McpTaskStarted } from '../../core/mcp/tasks.js';
import { callTaskOutcome } from './mcp-task.js';
import { progressEvents } from './tool-progress.js';
import { runMemoryTool } from '../tools/memory-tools.js';
import { errorText, resultStore, TOOL_ATTEMPTS, type StoreResult } from './tool-results.js';
import { parseArguments, type RunTools } from './tools.js';
import { metrics } from '../../core/telemetry/metrics.js';
import { errorName } from '../../core/telemetry/metrics/genai.js';
import { replayAnswer } from './tool-replay.js';
import { heartbeating, loadTurnRun } from './turn-run.js';
import type { SessionDeps, TurnPlan } from './types.js';
import { DEFAULT_PERSON_WAIT_MS } from './list-tools.js';
import { CallQuestions } from './mcp-questions.js';
import { runA2aCall } from './a2a-call.js';

/** A call that waits for someone: the server's authorization, or a person's answer to its question. */
type CallWait = Extract<McpToolOutcome, { kind: 'awaiting_authorization' | 'awaiting_input' }>;

/** Where the call stands when it starts: who it acts for, the answers held, how long waits last. */
interface CallContext {
  runId: string;
  step: number;
  plan: TurnPlan;
  endUserId: string | null;
  inputs: ReadonlyArray<InputAnswer | null | undefined>;
}

/** The server and its own name of the tool. */
type McpTarget = Pick<OfferedMcpTool, 'server_id' | 'server_name' | 'tool' | 'input_schema'>;

/** Runs the call, heartbeating with its progress; what goes back to the model, or a failure to retry. */
async function callTool(
  deps: SessionDeps,
  target: McpTarget,
  call: ToolCall,
  args: Record<string, unknown>,
  idempotencyKey: string,
  retryUnreached: boolean,
  at: CallContext,
): Promise<McpCallResult | CallWait | McpTaskStarted> {
  const ctx = Context.current();
  let progress: unknown;
  const stop = heartbeating(() => progress);
  const questions = new CallQuestions({
    db: deps.db,
    runId: at.runId,
    step: at.step,
    callId: call.id,
    call: { name: call.name, server: target.server_name, tool: target.tool },
    inputs: at.inputs,
    holdMs: deps.config.session.mcpInputHoldMs,
    callDeadline: Date.now() + deps.config.session.mcpToolTimeoutMs,
    timeoutMs: at.plan.input_timeout_ms ?? DEFAULT_PERSON_WAIT_MS,
    signal: ctx.cancellationSignal,
  });
  const announce = progressEvents(
    new RunEventsRepository(deps.db),
    at.runId,
    { step: at.step, id: call.id, name: call.name },
    (err) => {
      ctx.log.warn('could not record a progress event', { error: String(err) });
    },
  );
  try {
    const access = { db: deps.db, secrets: deps.secrets, publicUrl: publicBaseUrl(deps.config) };
    return await callMcpTool(access, target, args, {
      timeoutMs: deps.config.session.mcpToolTimeoutMs,
      // A long call its server runs as a task is followed by the session, on durable timers.
      tasks: { minMs: deps.config.session.mcpTaskPollMinMs, maxMs: deps.config.session.mcpTaskPollMaxMs },
      onProgress: (p) => {
        progress = p;
        ctx.heartbeat(p);
        announce(p);
      },
      signal: AbortSignal.any([ctx.cancellationSignal, questions.stop.signal]),
      idempotencyKey,
      elicit: questions.handle,
      rounds: questions,
      endUserId: at.endUserId,
    });
  } catch (err) {
    // Cancelled (the workflow no longer wants it): not a result for the model.
    if (ctx.cancellationSignal.aborted) throw err;
    const released = questions.released;
    if (released) {
      // What is left of the answer's deadline: the time waited connected counts.
      const timeoutMs = Math.max(1, released.timeoutAt - Date.now());
      return { kind: 'awaiting_input', details: released.details, timeoutMs, seq: released.seq };
    }
    if (err instanceof McpAuthorizationRequired)
      return {
        kind: 'awaiting_authorization',
        details: {
          call_id: call.id,
          server_id: target.server_id,
          server_name: target.server_name,
          end_user_id: err.endUserId,
          authorization_url: err.authorizationUrl,
        },
        timeoutMs: at.plan.authorization_timeout_ms ?? DEFAULT_PERSON_WAIT_MS,
      };
    // Not reached: safe to send again, until the last attempt, which tells the model. A
    // non-idempotent tool's is told at once: a retried attempt means its outcome is unknown.
    if (err instanceof McpConnectionError && retryUnreached && ctx.info.attempt < TOOL_ATTEMPTS) throw err;
    return { output: `tool "${call.name}" failed: ${errorText(err)}`, isError: true };
  } finally {
    stop();
  }
}

/** `tool_call.started`, once per call: a retried attempt announces nothing new. */
async function announceCall(
  events: RunEventsRepository,
  runId: string,
  step: number,
  call: ToolCall,
  server: string | undefined,
) {
  const attempt = Context.current().info.attempt;
  const data = { step, id: call.id, name: call.name, server, attempt };
  await events.append(runId, 'tool_call.started', data, `${step}.tool.${call.id}.started`);
}

/** A retried attempt of a call an earlier attempt announced (and so may have sent) has an unknown outcome. */
async function outcomeUnknown(events: RunEventsRepository, runId: string, step: number, call: ToolCall) {
  if (Context.current().info.attempt <= 1) return false;
  return events.has(runId, `${step}.tool.${call.id}.started`);
}

export function createMcpCallActivities(deps: SessionDeps) {
  const { db } = deps;
  const steps = new StepMessagesRepository(db);
  const events = new RunEventsRepository(db);

  /** A memory tool call (memory_save, memory_search) on the project's store: no server, no unknown outcome. */
  async function memoryCall(
    runId: string,
    step: number,
    call: ToolCall,
    args: Record<string, unknown>,
    plan: TurnPlan,
    store: StoreResult,
  ): Promise<McpToolOutcome> {
    await announceCall(events, runId, step, call, undefined);
    const started = performance.now();
    const result = await runMemoryTool(
      { db, secrets: deps.secrets, policy: deps.policy },
      {
        projectId: plan.project_id,
        agentId: plan.agent_id,
        conversationId: plan.conversation_id,
        callKey: `${runId}:${step}:${call.id}`,
        name: call.name,
        args,
      },
    );
    metrics().session.toolCall(
      'memory',
      (performance.now() - started) / 1000,
      result.isError ? 'tool_error' : undefined,
    );
    await store(result.output, result.isError, { tool: 'memory' });
    return { is_error: result.isError };
  }

  return {
    /**
     * One MCP tool call (a memory tool's runs in memoryCall). A call the server could not be reached for is
     * retried (it never arrived); anything else — the tool's own error, a
     * protocol error, a timeout — goes back to the model as the result.
     */
    async runMcpTool({ runId, step, callId, force, inputs }: ToolCallArgs): Promise<McpToolOutcome> {
      const done = await steps.toolResult(runId, step, callId);
      if (done) return { is_error: Boolean(done.is_error) };
      const { run, plan } = await loadTurnRun(db, runId);
      const tools = run.tools as RunTools | null;
      const call = (await steps.toolCalls(runId, step)).find((c) => c.id === callId);
      if (!call)
        throw ApplicationFailure.nonRetryable(`step ${step} has no call ${callId}`, 'tool_call_not_found');
      const store = resultStore(events, runId, plan.thread_id, step, call);
      const offered = tools?.offered.find(
        (t) => t.name === call.name && (t.kind === 'mcp' || t.kind === 'memory' || t.kind === 'a2a'),
      );
      if (!offered || (offered.kind === 'mcp' && !offered.server_id)) {
        await store(`tool "${call.name}" is not available to this agent`, true);
        return { is_error: true };
      }
      const args = parseArguments(call);
      if (typeof args === 'string') {
        await store(args, true);
        return { is_error: true };
      }
      // An eval's replay answers from its recording (or fails the turn as diverged): no side effect.
      const replayed = await replayAnswer(db, run, call, false);
      if (replayed.kind === 'recorded') {
        await store(replayed.output, replayed.is_error, { server: offered.server_name, replayed: true });
        return { is_error: replayed.is_error };
      }
      if (offered.kind === 'memory') return memoryCall(runId, step, call, args, plan, store);
      if (offered.kind === 'a2a')
        return runA2aCall(deps, {
          runId,
          step,
          call,
          args,
          plan,
          offered,
          store,
          endUserId: run.end_user_id ?? null,
        });
      // Listed as offered (`server__tool`) or by the tool's own name.
      const listed = plan.non_idempotent_tools ?? [];
      const nonIdempotent = listed.includes(call.name) || (!!offered.tool && listed.includes(offered.tool));
      // An earlier attempt announced the call and never finished it: it may have run. A person decides.
      if (nonIdempotent && !force && (await outcomeUnknown(events, runId, step, call)))
        return {
          kind: 'awaiting_decision',
          details: {
            call_id: call.id,
            step,
            name: call.name,
            arguments: call.arguments ?? null,
            server: offered.server_name,
            tool: offered.tool,
          },
          timeoutMs: plan.decision_timeout_ms ?? null,
        };
      await announceCall(events, runId, step, call, offered.server_name);
      const target = {
        server_id: offered.server_id!,
        server_name: offered.server_name ?? '',
        tool: offered.tool ?? call.name,
        input_schema: offered.input_schema,
      };
      const started = performance.now();
      // Derived from the call alone, like the sandbox's execution id: the same on every retry.
      const key = `${runId}:${step}:${call.id}`;
      const at = { runId, step, plan, endUserId: run.end_user_id ?? null, inputs: inputs ?? [] };
      const result = await callTool(deps, target, call, args, key, !nonIdempotent, at).catch(
        (err: unknown) => {
          metrics().session.toolCall('mcp', (performance.now() - started) / 1000, errorName(err));
          throw err;
        },
      );
      if ('kind' in result) {
        const startedAt = Date.now() - (performance.now() - started);
        return result.kind === 'task'
          ? callTaskOutcome(result, deps.config.session.mcpTaskMaxMs, startedAt)
          : result;
      }
      metrics().session.toolCall(
        'mcp',
        (performance.now() - started) / 1000,
        result.isError ? 'tool_error' : undefined,
      );
      await store(result.output, result.isError, {
        server: offered.server_name,
        tool: offered.tool,
        ...result.extras,
      });
      return { is_error: result.isError };
    },
  };
}
