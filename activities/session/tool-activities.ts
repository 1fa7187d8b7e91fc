/**
 * The session's tool activities: list the agent's MCP tools once per turn,
 * run one MCP call or one sandbox command per activity, answer calls that do
 * not run, and record a paused turn's approvals. Like the other session
 * activities they take ids, read what they need from Postgres, and are
 * idempotent per call: a stored result is returned, never produced twice.
 *
 * Retrying a sandbox command safely: the first attempt records
 * `tool_call.started` (with the sandbox's incarnation id) before sending the
 * command with an execution id (`<run>:<step>:<call>`). A retried attempt
 * never starts the command again: it attaches to the execution by id (the
 * daemon is still running it, or kept its result). When the daemon does not
 * know the id (the sandbox was recreated in between), the command's effect
 * is unknown, and the model is told so instead of the command being re-run.
 */
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { activityDefaults } from '../../temporal.config.js';
import type {
  ApprovalDecision,
  SandboxCallArgs,
  ToolAnswer,
  ToolCallArgs,
} from '../../workflows/session.definitions.js';
import type { ToolCall } from '../llm/types.js';
import { McpConnectionError } from '../mcp/errors.js';
import { NON_RETRYABLE_SANDBOX_ERRORS, SandboxExecutionUnknownError } from '../sandbox/errors.js';
import type { CommandResult, SandboxSession, SandboxSpec } from '../sandbox/sandbox-manager.js';
import { materializeSkills } from '../skills/skills.js';
import { callMcpTool, listAgentMcpTools } from '../tools/mcp-tools.js';
import { appendRunEvent, isTerminal, storeToolResult, type DbRun } from './run-store.js';
import type { SessionDeps, TurnPlan } from './session-activities.js';
import { heartbeating, loadTurnRun } from './turn-run.js';
import { parseArguments, runToolsRecord, SANDBOX_TOOL_NAME, sandboxState, type RunTools } from './tools.js';

/** Attempts of a tool-call activity (its retry policy); the last one answers the model instead of failing. */
const TOOL_ATTEMPTS = activityDefaults.toolCall.retry.maximumAttempts;

export interface SandboxCallResult {
  exit_code: number | null;
  duration_ms: number | null;
  timed_out?: boolean;
  /** The sandbox was recreated while the command ran: it may have partly run. */
  interrupted?: boolean;
  /** The result came from the daemon's record of an earlier attempt (the command did not run again). */
  reused?: boolean;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function createToolActivities(deps: SessionDeps) {
  const { db, config } = deps;

  async function loadRun(runId: string): Promise<{ run: DbRun; plan: TurnPlan; tools: RunTools | null }> {
    const { run, plan } = await loadTurnRun(db, runId);
    return { run, plan, tools: run.tools as RunTools | null };
  }

  async function stepCalls(runId: string, step: number): Promise<ToolCall[]> {
    const row = await db('messages')
      .where({ run_id: runId, step_key: `${step}.assistant` })
      .first<{ tool_calls: ToolCall[] | null } | undefined>('tool_calls');
    return row?.tool_calls ?? [];
  }

  async function storedResult(
    runId: string,
    step: number,
    callId: string,
  ): Promise<Record<string, unknown> | undefined> {
    const row = await db('messages')
      .where({ run_id: runId, step_key: `${step}.tool.${callId}` })
      .first<{ metadata: Record<string, unknown> | null } | undefined>('metadata');
    return row ? (row.metadata ?? {}) : undefined;
  }

  /** Stores this call's result (once; see `storeToolResult`). */
  function resultStore(runId: string, threadId: string, step: number, call: { id: string; name: string }) {
    return (output: string, isError: boolean, details?: Record<string, unknown>) =>
      storeToolResult(db, { runId, threadId, step, call, output, isError, ...(details ? { details } : {}) });
  }

  return {
    /**
     * Lists the agent's MCP servers' tools (filters, unique names) and
     * records on the run what the model will see and why. Once per turn: a
     * run that has its list keeps it.
     */
    async listTools(runId: string): Promise<{ offered: number; failedServers: number }> {
      const { plan, tools } = await loadRun(runId);
      if (tools) return { offered: tools.offered.length, failedServers: 0 };
      const listing = await listAgentMcpTools(
        { db, secrets: deps.secrets },
        plan.project_id,
        plan.mcp_servers,
        {
          timeoutMs: config.session.mcpListTimeoutMs,
          reservedNames: plan.sandbox_enabled ? [SANDBOX_TOOL_NAME] : [],
        },
      );
      const record = runToolsRecord(sandboxState(plan), listing);
      const warnings: string[] = [];
      for (const server of listing.servers) {
        if (server.error)
          warnings.push(
            `MCP server "${server.name}" could not be listed (${server.error}): its tools were not offered`,
          );
        if (server.unmatched_filters?.length)
          warnings.push(
            `tool_filters of MCP server "${server.name}" name tools it does not list: ${server.unmatched_filters.join(', ')}`,
          );
      }
      await db('runs')
        .where({ id: runId })
        .whereNull('tools')
        .update({
          tools: JSON.stringify(record),
          warnings: db.raw(`warnings || ?::jsonb`, [JSON.stringify(warnings)]),
        });
      return {
        offered: record.offered.length,
        failedServers: listing.servers.filter((s) => s.error).length,
      };
    },

    /**
     * One MCP tool call. A call the server could not be reached for is
     * retried (it never arrived); anything else — the tool's own error, a
     * protocol error, a timeout — goes back to the model as the result.
     */
    async runMcpTool({ runId, step, callId }: ToolCallArgs): Promise<{ is_error: boolean }> {
      const done = await storedResult(runId, step, callId);
      if (done) return { is_error: Boolean(done.is_error) };
      const { plan, tools } = await loadRun(runId);
      const call = (await stepCalls(runId, step)).find((c) => c.id === callId);
      if (!call)
        throw ApplicationFailure.nonRetryable(`step ${step} has no call ${callId}`, 'tool_call_not_found');
      const store = resultStore(runId, plan.thread_id, step, call);
      const offered = tools?.offered.find((t) => t.name === call.name && t.kind === 'mcp');
      if (!offered?.server_id) {
        await store(`tool "${call.name}" is not available to this agent`, true);
        return { is_error: true };
      }
      const args = parseArguments(call);
      if (typeof args === 'string') {
        await store(args, true);
        return { is_error: true };
      }
      const ctx = Context.current();
      await appendRunEvent(
        db,
        runId,
        'tool_call.started',
        { step, id: call.id, name: call.name, server: offered.server_name, attempt: ctx.info.attempt },
        `${step}.tool.${call.id}.started`,
      );
      let progress: unknown;
      const stop = heartbeating(() => progress);
      let result: { output: string; isError: boolean };
      try {
        result = await callMcpTool(
          { db, secrets: deps.secrets },
          {
            server_id: offered.server_id,
            server_name: offered.server_name ?? '',
            tool: offered.tool ?? call.name,
          },
          args,
          {
            timeoutMs: config.session.mcpToolTimeoutMs,
            onProgress: (p) => {
              progress = p;
              ctx.heartbeat(p);
            },
            signal: ctx.cancellationSignal,
          },
        );
      } catch (err) {
        // Cancelled (the workflow no longer wants it): not a result for the model.
        if (ctx.cancellationSignal.aborted) throw err;
        // Not reached: safe to send again, until the last attempt, which tells the model.
        if (err instanceof McpConnectionError && ctx.info.attempt < TOOL_ATTEMPTS) throw err;
        result = { output: `tool "${call.name}" failed: ${errorText(err)}`, isError: true };
      } finally {
        stop();
      }
      await store(result.output, result.isError, { server: offered.server_name, tool: offered.tool });
      return { is_error: result.isError };
    },

    /**
     * One execute_bash_commands call in the session's sandbox (ensured, or
     * recreated after an idle shutdown, on the same workspace). Returns the
     * exit code so it shows in the workflow's history.
     */
    async runSandboxCommand({ runId, step, callId, command }: SandboxCallArgs): Promise<SandboxCallResult> {
      const done = await storedResult(runId, step, callId);
      if (done)
        return {
          exit_code: (done.exit_code as number | undefined) ?? null,
          duration_ms: (done.duration_ms as number | undefined) ?? null,
          ...(done.interrupted ? { interrupted: true } : {}),
        };
      const { plan } = await loadRun(runId);
      const call = { id: callId, name: SANDBOX_TOOL_NAME };
      const store = resultStore(runId, plan.thread_id, step, call);
      const sandbox = deps.sandbox;
      if (!plan.sandbox_enabled || !sandbox || sandbox.backend === 'disabled') {
        await store('the sandbox is not available on this server (SANDBOX_ENABLED is unset)', true);
        return { exit_code: null, duration_ms: null };
      }
      const session: SandboxSession = {
        projectId: plan.project_id,
        agentId: plan.agent_id,
        conversationId: plan.conversation_id,
      };
      const spec: SandboxSpec = {
        ...(plan.sandbox_image ? { image: plan.sandbox_image } : {}),
        ...(plan.skills.length
          ? { skillsDir: await materializeSkills(db, plan.agent_id, path.join(config.dataDir, 'skills')) }
          : {}),
      };
      const ctx = Context.current();
      const stop = heartbeating();
      try {
        const handle = await sandbox.ensure(session, spec);
        // Written once: a retry finds it and only attaches to the execution it announced.
        const first =
          (await appendRunEvent(
            db,
            runId,
            'tool_call.started',
            {
              step,
              id: callId,
              name: SANDBOX_TOOL_NAME,
              command,
              sandbox_id: handle.id,
              sandbox_created: handle.created,
            },
            `${step}.tool.${callId}.started`,
          )) !== null;
        let result: CommandResult;
        try {
          result = await sandbox.exec(
            session,
            { command, id: `${runId}:${step}:${callId}`, ...(first ? {} : { attachOnly: true }) },
            spec,
          );
        } catch (err) {
          if (err instanceof SandboxExecutionUnknownError) {
            const details = { interrupted: true, sandbox_id: handle.id };
            await store(
              JSON.stringify({
                error:
                  'the command was interrupted: the sandbox restarted while it ran (or before it started), so it may have run partly, fully or not at all. Check the workspace before running it again.',
              }),
              true,
              details,
            );
            return { exit_code: null, duration_ms: null, interrupted: true };
          }
          throw err;
        }
        const { reused, ...shown } = result as CommandResult & { reused?: boolean };
        await store(JSON.stringify(shown), false, {
          exit_code: result.exit_code,
          duration_ms: result.duration_ms,
          sandbox_id: handle.id,
          ...(result.timed_out ? { timed_out: true } : {}),
        });
        return {
          exit_code: result.exit_code,
          duration_ms: result.duration_ms,
          ...(result.timed_out ? { timed_out: true } : {}),
          ...(reused ? { reused: true } : {}),
        };
      } catch (err) {
        // Sandbox trouble (cannot start, daemon gone): retried; the last attempt tells the model.
        // Permanent trouble (no image, bad request, token mismatch) goes to the model at once.
        const permanent =
          (err instanceof ApplicationFailure && err.nonRetryable) ||
          (NON_RETRYABLE_SANDBOX_ERRORS as readonly string[]).includes((err as Error).name);
        if (ctx.info.attempt < TOOL_ATTEMPTS && !permanent) throw err;
        await store(JSON.stringify({ error: `the sandbox failed: ${errorText(err)}` }), true);
        return { exit_code: null, duration_ms: null };
      } finally {
        stop();
      }
    },

    /** Stores answers for calls that do not run (declined, invalid, the turn is ending). */
    async answerToolCalls(args: { runId: string; step: number; answers: ToolAnswer[] }): Promise<void> {
      const { plan } = await loadRun(args.runId);
      for (const a of args.answers)
        await storeToolResult(db, {
          runId: args.runId,
          threadId: plan.thread_id,
          step: args.step,
          call: { id: a.id, name: a.name },
          output: a.output,
          isError: a.isError,
        });
    },

    /** The turn waits for a person: status awaiting_approval with the pending calls, and `run.paused`. */
    async pauseForApproval(args: { runId: string; step: number; callIds: string[] }): Promise<void> {
      const { runId, step } = args;
      const { tools } = await loadRun(runId);
      const calls = await stepCalls(runId, step);
      const pending = args.callIds.map((id) => {
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
      await db.transaction(async (trx) => {
        const run = await trx('runs').where({ id: runId }).forUpdate().first<DbRun | undefined>();
        if (!run || isTerminal(run.status)) return;
        await trx('runs')
          .where({ id: runId })
          .update({ status: 'awaiting_approval', pending_approvals: JSON.stringify(pending) });
        await appendRunEvent(
          trx,
          runId,
          'run.paused',
          { status: 'awaiting_approval', step, pending },
          `${step}.paused`,
        );
      });
    },

    /**
     * Records decisions (once each) and what still waits. When nothing does,
     * the run is running again and `run.resumed` says what was decided, in the
     * same transaction, so whoever reads the run next sees it resumed.
     */
    async recordApprovals(args: {
      runId: string;
      step: number;
      decisions: ApprovalDecision[];
      remaining: string[];
    }): Promise<void> {
      const { runId, step } = args;
      await db.transaction(async (trx) => {
        const run = await trx('runs').where({ id: runId }).forUpdate().first<DbRun | undefined>();
        if (!run || isTerminal(run.status)) return;
        const known = new Set(run.approvals.map((a) => `${String(a.step)}/${String(a.id)}`));
        const at = new Date().toISOString();
        const added = args.decisions
          .filter((d) => !known.has(`${step}/${d.id}`))
          .map((d) => ({ ...d, step, at }));
        const approvals = [...run.approvals, ...added];
        const resumed = args.remaining.length === 0;
        await trx('runs')
          .where({ id: runId })
          .update({
            approvals: JSON.stringify(approvals),
            ...(resumed
              ? { status: 'running', pending_approvals: null }
              : {
                  pending_approvals: JSON.stringify(
                    (run.pending_approvals ?? []).filter((p) => args.remaining.includes(String(p.id))),
                  ),
                }),
          });
        if (!resumed) return;
        const decided = approvals.filter((a) => a.step === step);
        await appendRunEvent(
          trx,
          runId,
          'run.resumed',
          {
            status: 'running',
            step,
            approved: decided.filter((a) => a.decision === 'approved').map((a) => a.id),
            rejected: decided.filter((a) => a.decision === 'rejected').map((a) => ({ id: a.id, by: a.by })),
          },
          `${step}.resumed`,
        );
      });
    },
  };
}
