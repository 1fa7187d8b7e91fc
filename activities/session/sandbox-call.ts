/**
 * The `runSandboxCommand` activity: one execute_bash_commands call in the
 * session's sandbox.
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
import { RunEventsRepository } from '../../core/repositories/run-events.repository.js';
import { StepMessagesRepository } from '../../core/repositories/step-messages.repository.js';
import type { SandboxCallArgs } from '../../workflows/session.definitions.js';
import { NON_RETRYABLE_SANDBOX_ERRORS, SandboxExecutionUnknownError } from '../sandbox/errors.js';
import type {
  CommandResult,
  SandboxManager,
  SandboxSession,
  SandboxSpec,
} from '../sandbox/sandbox-manager.js';
import { materializeSkills } from '../skills/skills.js';
import { errorText, resultStore, TOOL_ATTEMPTS, type StoreResult } from './tool-results.js';
import { SANDBOX_TOOL_NAME } from './tools.js';
import { metrics } from '../../core/telemetry/metrics.js';
import { errorName } from '../../core/telemetry/metrics/genai.js';
import { isReplay, replayAnswer } from './tool-replay.js';
import { heartbeating, loadTurnRun } from './turn-run.js';
import type { SessionDeps, TurnPlan } from './types.js';

export interface SandboxCallResult {
  exit_code: number | null;
  duration_ms: number | null;
  timed_out?: boolean;
  /** The sandbox was recreated while the command ran: it may have partly run. */
  interrupted?: boolean;
  /** The result came from the daemon's record of an earlier attempt (the command did not run again). */
  reused?: boolean;
}

/** One command of a step, where it runs and where its result goes. */
interface Command extends SandboxCallArgs {
  session: SandboxSession;
  spec: SandboxSpec;
  store: StoreResult;
}

/** What an earlier attempt stored (its result's metadata), as the activity returns it. */
function storedOutcome(done: Record<string, unknown>): SandboxCallResult {
  return {
    exit_code: (done.exit_code as number | undefined) ?? null,
    duration_ms: (done.duration_ms as number | undefined) ?? null,
    ...(done.interrupted ? { interrupted: true } : {}),
  };
}

/** The command's result: shown to the model as JSON (without `reused`), its exit code in the history. */
async function storeCommandResult(
  store: StoreResult,
  result: CommandResult,
  sandboxId: string,
): Promise<SandboxCallResult> {
  const { reused, ...shown } = result as CommandResult & { reused?: boolean };
  await store(JSON.stringify(shown), false, {
    exit_code: result.exit_code,
    duration_ms: result.duration_ms,
    sandbox_id: sandboxId,
    ...(result.timed_out ? { timed_out: true } : {}),
  });
  return {
    exit_code: result.exit_code,
    duration_ms: result.duration_ms,
    ...(result.timed_out ? { timed_out: true } : {}),
    ...(reused ? { reused: true } : {}),
  };
}

/** The daemon does not know the execution: the command may have run partly, fully or not at all. */
async function storeInterrupted(store: StoreResult, sandboxId: string): Promise<SandboxCallResult> {
  await store(
    JSON.stringify({
      error:
        'the command was interrupted: the sandbox restarted while it ran (or before it started), so it may have run partly, fully or not at all. Check the workspace before running it again.',
    }),
    true,
    { interrupted: true, sandbox_id: sandboxId },
  );
  return { exit_code: null, duration_ms: null, interrupted: true };
}

/** The sandbox the agent asks for, with its skills folder when it has skills (brought in line with Postgres). */
async function sandboxSpec(deps: SessionDeps, plan: TurnPlan): Promise<SandboxSpec> {
  return {
    ...(plan.sandbox_image ? { image: plan.sandbox_image } : {}),
    ...(plan.skills.length
      ? {
          skillsDir: await materializeSkills(
            deps.db,
            plan.agent_id,
            path.join(deps.config.dataDir, 'skills'),
          ),
        }
      : {}),
  };
}

/**
 * The command's result, or the activity's cancellation as soon as the run is
 * cancelled: the turn stops waiting for it and `kill` stops the command in
 * the sandbox (its late result or failure is nobody's).
 */
function untilCancelled<T>(running: Promise<T>, kill: () => Promise<unknown>): Promise<T> {
  const signal = Context.current().cancellationSignal;
  running.catch(() => undefined);
  const cancelled = new Promise<never>((_, reject) => {
    const stop = () => {
      kill().catch(() => undefined);
      reject(signal.reason as Error);
    };
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  return Promise.race([running, cancelled]);
}

/** Ensures the sandbox and runs the command in it, or attaches to the execution an earlier attempt started. */
async function runCommand(
  events: RunEventsRepository,
  sandbox: SandboxManager,
  c: Command,
): Promise<SandboxCallResult> {
  const { runId, step, callId, command } = c;
  const handle = await sandbox.ensure(c.session, c.spec);
  // Written once: a retry finds it and only attaches to the execution it announced.
  const first =
    (await events.append(
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
    const execution = { command, id: `${runId}:${step}:${callId}`, ...(first ? {} : { attachOnly: true }) };
    const kill = async () => sandbox.cancelExec?.(c.session, execution.id);
    result = await untilCancelled(sandbox.exec(c.session, execution, c.spec), kill);
  } catch (err) {
    if (err instanceof SandboxExecutionUnknownError) return storeInterrupted(c.store, handle.id);
    throw err;
  }
  return storeCommandResult(c.store, result, handle.id);
}

export function createSandboxCallActivities(deps: SessionDeps) {
  const { db } = deps;
  const steps = new StepMessagesRepository(db);
  const events = new RunEventsRepository(db);

  return {
    /**
     * One execute_bash_commands call in the session's sandbox (ensured, or
     * recreated after an idle shutdown, on the same workspace). Returns the
     * exit code so it shows in the workflow's history.
     */
    async runSandboxCommand(args: SandboxCallArgs): Promise<SandboxCallResult> {
      const { runId, step, callId } = args;
      const done = await steps.toolResult(runId, step, callId);
      if (done) return storedOutcome(done);
      const { run, plan } = await loadTurnRun(db, runId);
      const store = resultStore(events, runId, plan.thread_id, step, { id: callId, name: SANDBOX_TOOL_NAME });
      // An eval's replay answers from its recording, fails the turn as diverged, or (allowed) runs it.
      const call = isReplay(run)
        ? (await steps.toolCalls(runId, step)).find((c) => c.id === callId)
        : undefined;
      const replayed = call ? await replayAnswer(db, run, call, true) : { kind: 'live' as const };
      if (replayed.kind === 'recorded') {
        await store(replayed.output, replayed.is_error, { replayed: true });
        return { exit_code: null, duration_ms: null };
      }
      const sandbox = deps.sandbox;
      if (!plan.sandbox_enabled || !sandbox || sandbox.backend === 'disabled') {
        await store('the sandbox is not available on this server (SANDBOX_ENABLED is unset)', true);
        return { exit_code: null, duration_ms: null };
      }
      const session = {
        projectId: plan.project_id,
        agentId: plan.agent_id,
        conversationId: plan.conversation_id,
      };
      const spec = await sandboxSpec(deps, plan);
      const ctx = Context.current();
      const stop = heartbeating();
      const started = performance.now();
      const took = () => (performance.now() - started) / 1000;
      try {
        const result = await runCommand(events, sandbox, { ...args, session, spec, store });
        metrics().session.toolCall('sandbox', took(), result.interrupted ? 'interrupted' : undefined);
        return result;
      } catch (err) {
        metrics().session.toolCall('sandbox', took(), errorName(err));
        // Cancelled (the run was): not a result for the model.
        if (ctx.cancellationSignal.aborted) throw err;
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
  };
}
