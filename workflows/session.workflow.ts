import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { SessionActivities } from '../activities/session/session-activities.js';
import { activityDefaults } from '../temporal.config.js';
import {
  approvalUpdate,
  converseUpdate,
  sessionStateQuery,
  type ApprovalArgs,
  type ApprovalDecision,
  type ConverseUpdateArgs,
  type PendingStep,
  type SessionInput,
  type SessionState,
  type ToolAnswer,
  type ToolCallPlan,
} from './session.definitions.js';

/** What a person is asked to decide on: the current run's calls that wait for approval. */
interface Paused {
  runId: string;
  step: number;
  calls: ToolCallPlan[];
  decisions: Map<string, ApprovalDecision>;
  /** Approval handlers still writing their decisions to Postgres. */
  recording: number;
}

/** Marks turns run with per-call tool activities and approvals (see `patched`). */
const AGENT_TOOLS_PATCH = 'agent-tools';

/** The answer a declined call gives the model. */
const DECLINED = 'declined by user';

/** Runs remembered as done in this workflow run, so a re-sent Update is not queued twice. */
const MAX_REMEMBERED = 500;

/**
 * One agent session (agent + conversation). Each user message arrives as an
 * Update carrying only its run id; turns run one at a time in arrival order.
 * The transcript lives in Postgres: every step is an activity that reads and
 * writes it by id, so a worker crash repeats at most the step it interrupted
 * (and that step is idempotent).
 */
export async function sessionWorkflow(input: SessionInput): Promise<{ turns: number }> {
  const { settings } = input;
  /** Runs accepted and not yet finished, in arrival order; the first one is running. */
  const queue: string[] = [];
  const done = new Set<string>();
  let turns = input.turnsCompleted ?? 0;
  let turnsThisRun = 0;
  let current: string | null = null;
  let step = 0;
  let pending: PendingStep = 'none';

  // Bookkeeping in Postgres: retried until it works (an outage delays the turn, never fails the session).
  const local = proxyLocalActivities<SessionActivities>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '500 ms', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  });
  const { summarizeHistory } = proxyActivities<SessionActivities>({
    ...activityDefaults.modelCall,
    heartbeatTimeout: settings.modelHeartbeatTimeoutMs,
  });
  const { callModel } = proxyActivities<SessionActivities>({
    ...activityDefaults.modelCall,
    heartbeatTimeout: settings.modelHeartbeatTimeoutMs,
  });
  const { runToolCalls, listTools } = proxyActivities<SessionActivities>(activityDefaults.toolCall);
  const toolCallOptions = {
    ...activityDefaults.toolCall,
    heartbeatTimeout: settings.toolHeartbeatTimeoutMs ?? settings.modelHeartbeatTimeoutMs,
  };
  const { runMcpTool, runSandboxCommand } = proxyActivities<SessionActivities>(toolCallOptions);
  let paused: Paused | null = null;

  /*
   * The turn runs inside its Update's handler, so its activities belong to
   * the converse request that sent it (one trace per request). The API waits
   * only for the Update to be accepted; handlers take turns in arrival order.
   */
  setHandler(
    converseUpdate,
    async ({ runId }) => {
      if (current === runId || queue.includes(runId) || done.has(runId)) return { runId, position: 0 };
      queue.push(runId);
      const position = queue.length - 1;
      await condition(() => queue[0] === runId);
      current = runId;
      turns++;
      turnsThisRun++;
      try {
        await runTurn(runId);
      } finally {
        current = null;
        pending = 'none';
        queue.shift();
        done.add(runId);
        if (done.size > MAX_REMEMBERED) done.delete(done.values().next().value!);
      }
      return { runId, position };
    },
    {
      validator: (args: ConverseUpdateArgs | undefined) => {
        if (typeof args?.runId !== 'string' || !/^[0-9a-f-]{36}$/.test(args.runId))
          throw new Error('runId must be a uuid');
      },
    },
  );
  /*
   * A person's decision on paused calls. The validator refuses (and nothing
   * is recorded) unless the run is paused on exactly those undecided calls;
   * the handler records the decisions in Postgres before it returns, so the
   * API answers with what is stored.
   */
  setHandler(
    approvalUpdate,
    async ({ runId, approved_call_ids, rejected_call_ids }) => {
      const p = paused!;
      const decided: ApprovalDecision[] = [
        ...approved_call_ids.map((id) => ({ id, decision: 'approved' as const, by: 'user' as const })),
        ...rejected_call_ids.map((id) => ({ id, decision: 'rejected' as const, by: 'user' as const })),
      ];
      for (const d of decided) p.decisions.set(d.id, d);
      const remaining = p.calls.filter((c) => !p.decisions.has(c.id)).map((c) => c.id);
      p.recording++;
      try {
        await local.recordApprovals({ runId, step: p.step, decisions: decided, remaining });
      } finally {
        p.recording--;
      }
      return { status: remaining.length ? 'awaiting_approval' : 'running', pending_call_ids: remaining };
    },
    {
      validator: (args: ApprovalArgs | undefined) => {
        const p = paused;
        if (!p || p.runId !== args?.runId) throw new Error('run is not awaiting approval');
        const ids = [...(args.approved_call_ids ?? []), ...(args.rejected_call_ids ?? [])];
        if (ids.length === 0) throw new Error('no call ids given');
        if (new Set(ids).size !== ids.length) throw new Error('a call id is given twice');
        for (const id of ids) {
          if (!p.calls.some((c) => c.id === id)) throw new Error(`call ${id} is not awaiting approval`);
          if (p.decisions.has(id)) throw new Error(`call ${id} was already decided`);
        }
      },
    },
  );
  setHandler(sessionStateQuery, (): SessionState => ({
    status: current ? 'running' : 'idle',
    current_run_id: current,
    current_turn: turns,
    current_step: step,
    pending_step: pending,
    queued_run_ids: queue.filter((id) => id !== current),
    awaiting_approval_call_ids: paused
      ? paused.calls.filter((c) => !paused!.decisions.has(c.id)).map((c) => c.id)
      : [],
  }));

  /**
   * The step's tool calls, in the model's order: each runs as its own
   * activity (sandbox commands show their command in the workflow's history
   * and UI); calls that need approval wait for a person's decision first,
   * or until the agent's approval timeout declines them.
   */
  async function runTools(
    runId: string,
    step: number,
    calls: ToolCallPlan[],
    approvalTimeoutMs: number | null,
  ): Promise<void> {
    const asking = calls.filter((c) => c.approval);
    const decisions = new Map<string, ApprovalDecision>();
    if (asking.length) {
      pending = 'awaiting_approval';
      const p: Paused = { runId, step, calls: asking, decisions, recording: 0 };
      paused = p;
      try {
        await local.pauseForApproval({ runId, step, callIds: asking.map((c) => c.id) });
        const allDecided = () => asking.every((c) => p.decisions.has(c.id));
        const inTime = await condition(allDecided, approvalTimeoutMs ?? undefined);
        if (!inTime) {
          const late = asking
            .filter((c) => !p.decisions.has(c.id))
            .map((c) => ({ id: c.id, decision: 'rejected' as const, by: 'timeout' as const }));
          for (const d of late) p.decisions.set(d.id, d);
          await local.recordApprovals({ runId, step, decisions: late, remaining: [] });
        }
        // The turn goes on once the decisions' writes are done (they run in the Update handlers).
        await condition(() => p.recording === 0);
      } finally {
        paused = null;
      }
    }
    pending = 'tools';
    for (const call of calls) {
      const decision = decisions.get(call.id);
      if (call.kind === 'invalid' || decision?.decision === 'rejected') {
        const answer: ToolAnswer =
          call.kind === 'invalid'
            ? { id: call.id, name: call.name, output: call.error ?? 'invalid tool call', isError: true }
            : {
                id: call.id,
                name: call.name,
                output:
                  decision!.by === 'timeout'
                    ? `${DECLINED}: no decision within the agent's approval timeout (${approvalTimeoutMs} ms)`
                    : DECLINED,
                isError: true,
              };
        await local.answerToolCalls({ runId, step, answers: [answer] });
      } else if (call.kind === 'sandbox') {
        await runSandboxCommand.executeWithOptions(
          { ...toolCallOptions, summary: `$ ${oneLine(call.command ?? '')}` },
          [{ runId, step, callId: call.id, command: call.command ?? '' }],
        );
      } else {
        await runMcpTool.executeWithOptions({ ...toolCallOptions, summary: `MCP ${call.name}` }, [
          { runId, step, callId: call.id },
        ]);
      }
    }
  }

  async function runTurn(runId: string): Promise<void> {
    pending = 'starting';
    step = 0;
    try {
      let corrected = false;
      let summarized = false;
      for (step = 1; ; step++) {
        pending = 'model_call';
        // Step 1 also starts the turn: it pins the agent's plan on the run.
        const result = await callModel(runId, step, summarized);
        // The final answer's activity has already recorded the run as completed.
        if (result.kind === 'final' || result.kind === 'over') return;
        if (result.kind === 'list_tools') {
          pending = 'list_tools';
          await listTools(runId);
          step--;
          continue;
        }
        if (result.kind === 'summarize') {
          pending = 'summarize';
          await summarizeHistory(runId);
          summarized = true;
          step--;
          continue;
        }
        if (result.kind === 'invalid_output') {
          if (corrected) {
            throw ApplicationFailure.nonRetryable(
              `the answer does not match the agent's schema: ${result.errors.join('; ')}`,
              'schema_validation_failed',
              { errors: result.errors },
            );
          }
          // One corrective retry, which does not count as an iteration.
          corrected = true;
          continue;
        }
        pending = 'tools';
        if (step >= result.maxIterations) {
          await runToolCalls(runId, step, 'maximum iterations reached');
          throw ApplicationFailure.nonRetryable('maximum iterations reached', 'max_iterations', {
            max_iterations: result.maxIterations,
          });
        }
        // Histories written before agent tools answered every call in one activity: replay them as they ran.
        if (patched(AGENT_TOOLS_PATCH)) await runTools(runId, step, result.calls, result.approvalTimeoutMs);
        else await runToolCalls(runId, step);
      }
    } catch (err) {
      pending = 'finishing';
      await local.finishTurn({ runId, status: 'failed', error: turnError(err) });
    }
  }

  for (;;) {
    const gotMessage = await condition(() => queue.length > 0, settings.idleTimeoutMs);
    if (!gotMessage) {
      // Idle: finish, unless an Update slipped in meanwhile.
      await condition(allHandlersFinished);
      if (queue.length === 0) {
        log.info('session idle; completing', { turns });
        return { turns };
      }
      continue;
    }
    await condition(() => queue.length === 0);
    if (workflowInfo().continueAsNewSuggested || turnsThisRun >= settings.continueAsNewAfterTurns) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof sessionWorkflow>({ ...input, turnsCompleted: turns });
    }
  }
}

/** A command as a one-line activity summary. */
function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}

/** The failure as the run reports it: the application failure's type and message, without Temporal's wrapping. */
function turnError(err: unknown): { code: string; message: string; details?: unknown } {
  let cause: unknown = err;
  if (cause instanceof ActivityFailure) cause = cause.cause;
  if (cause instanceof ApplicationFailure) {
    const details = cause.details?.[0];
    return {
      code: cause.type ?? 'error',
      message: cause.message,
      ...(details !== undefined ? { details } : {}),
    };
  }
  return { code: 'error', message: cause instanceof Error ? cause.message : String(cause) };
}
