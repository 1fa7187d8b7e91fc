import {
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  patched,
  type ActivityFunctionWithOptions,
  type ActivityOptions,
} from '@temporalio/workflow';
import type {
  ApprovalDecision,
  AwaitingAuthorization,
  InputAnswer,
  ListToolsResult,
  CancelAction,
  CancelTurnArgs,
  FinishTurnArgs,
  McpToolOutcome,
  ModelStepResult,
  PendingStep,
  SandboxCallArgs,
  ToolAnswer,
  ToolCallArgs,
  ToolCallPlan,
} from '../session.definitions.js';
import type { ApprovalGate } from './approval-gate.js';
import { followMcpTask, type McpTaskActivities } from './mcp-task-wait.js';
import type { AnswerWait, BudgetWait, DecisionWait } from './run-waits.js';
import { settle, SUB_AGENTS_PATCH, SubAgentCalls } from './sub-agent-calls.js';
import { oneLine, schemaMismatch, turnError, unrunAnswer } from './turn-outcomes.js';

/** Marks turns run with per-call tool activities and approvals (see `patched`). */
const AGENT_TOOLS_PATCH = 'agent-tools';
/** Marks turns that waited for budget (a model call's result no earlier history had). */
const BUDGET_WAIT_PATCH = 'budget-wait';
/** Marks turns that waited for a decision on a tool call whose outcome was unknown. */
const TOOL_DECISION_PATCH = 'tool-decision';

/** Marks turns that waited for an MCP server's OAuth authorization. */
const MCP_AUTHORIZATION_PATCH = 'mcp-authorization';
/** Marks turns whose MCP call waited for a person's answer to the server's question. */
const MCP_INPUT_PATCH = 'mcp-input';
/** Marks turns whose MCP call its server ran as a task, polled on durable timers. */
const MCP_TASKS_PATCH = 'mcp-tasks';

/** The failure type of a turn whose wait for budget outlasted the agent's budget_wait_timeout_ms. */
const BUDGET_WAIT_TIMEOUT = 'budget_wait_timeout';

type AwaitingDecision = Extract<McpToolOutcome, { kind: 'awaiting_decision' }>;
type AwaitingBudget = Extract<ModelStepResult, { kind: 'awaiting_budget' }>;

function awaitingBudget(result: unknown): result is AwaitingBudget {
  return (result as { kind?: string } | undefined)?.kind === 'awaiting_budget';
}

function awaitingDecision(outcome: unknown): outcome is AwaitingDecision {
  return (outcome as McpToolOutcome | undefined)?.kind === 'awaiting_decision';
}

function awaitingAuthorization(outcome: unknown): outcome is AwaitingAuthorization {
  return (outcome as { kind?: string } | undefined)?.kind === 'awaiting_authorization';
}

type AwaitingInput = Extract<McpToolOutcome, { kind: 'awaiting_input' }>;

function awaitingInput(outcome: unknown): outcome is AwaitingInput {
  return (outcome as McpToolOutcome | undefined)?.kind === 'awaiting_input';
}

/** What the model hears of a call whose server was not authorized in time. */
function unauthorizedAnswer(details: Record<string, unknown>): string {
  const server = typeof details.server_name === 'string' ? details.server_name : 'the MCP server';
  return `the call was not made: MCP server "${server}" was not authorized within the agent's authorization_timeout_ms`;
}

/** The activities a turn schedules, as the workflow proxies them (with their options). */
export interface TurnActivities {
  callModel: (runId: string, step: number, summarized?: boolean) => Promise<ModelStepResult>;
  summarizeHistory: (runId: string) => Promise<{ summarized: number } | AwaitingBudget>;
  /** `skipUnauthorized`: servers that want authorization are left out (with a warning) instead of waited for. */
  listTools: (runId: string, skipUnauthorized?: boolean) => Promise<ListToolsResult>;
  runToolCalls: (runId: string, step: number, reason?: string) => Promise<unknown>;
  runMcpTool: ActivityFunctionWithOptions<(args: ToolCallArgs) => Promise<McpToolOutcome>>;
  pollMcpTask: McpTaskActivities['pollMcpTask'];
  cancelMcpTask: McpTaskActivities['cancelMcpTask'];
  runSandboxCommand: ActivityFunctionWithOptions<(args: SandboxCallArgs) => Promise<unknown>>;
  /** The tool call activities' options, repeated with each call's own summary. */
  toolCallOptions: ActivityOptions;
  /** Local activities: bookkeeping in Postgres. */
  answerToolCalls: (args: { runId: string; step: number; answers: ToolAnswer[] }) => Promise<void>;
  finishTurn: (args: FinishTurnArgs) => Promise<void>;
  cancelTurn: (args: CancelTurnArgs) => Promise<void>;
}

/** The turn in progress: the scope its steps run in, and the cancel asked for it. */
interface CurrentTurn {
  runId: string;
  scope: CancellationScope;
  cancel?: CancelAction;
}

/**
 * Runs one turn: model calls and their tool calls, step by step, until the
 * final answer. The transcript lives in Postgres: every step is an activity
 * that reads and writes it by id, so a worker crash repeats at most the step
 * it interrupted (and that step is idempotent). `step` and `pending` are what
 * the state Query reports.
 */
export class TurnRunner {
  step = 0;
  pending: PendingStep = 'none';
  private current: CurrentTurn | undefined;
  private readonly subAgents: SubAgentCalls;

  constructor(
    private readonly activities: TurnActivities,
    private readonly approvals: ApprovalGate,
    private readonly waits: {
      budget: BudgetWait;
      decision: DecisionWait;
      authorization: AnswerWait<true>;
      input: AnswerWait<InputAnswer>;
    },
  ) {
    const heartbeat = (activities.toolCallOptions as { heartbeatTimeout?: unknown }).heartbeatTimeout;
    this.subAgents = new SubAgentCalls(
      activities.answerToolCalls,
      typeof heartbeat === 'number' ? heartbeat : undefined,
    );
  }

  /**
   * Stops the turn of `runId` if it is the one running: its activity is
   * cancelled (a model call, an MCP call, a sandbox command, a wait for
   * approval) and the turn ends with `cancelTurn`. False when that run is not
   * running here.
   */
  cancel(runId: string, action: CancelAction): boolean {
    const turn = this.current;
    if (turn?.runId !== runId) return false;
    turn.cancel ??= action;
    turn.scope.cancel();
    return true;
  }

  /**
   * The steps run in a cancellation scope of their own (which schedules
   * nothing: histories recorded before cancelling existed replay as they ran);
   * a cancelled turn ends with `cancelTurn`, once the approval decisions being
   * written are stored, any other failure with `finishTurn`.
   */
  async run(runId: string): Promise<void> {
    this.pending = 'starting';
    this.step = 0;
    this.subAgents.reset();
    const turn: CurrentTurn = { runId, scope: new CancellationScope() };
    this.current = turn;
    try {
      await turn.scope.run(() => this.steps(runId));
    } catch (err) {
      this.pending = 'finishing';
      if (turn.cancel && isCancellation(err)) {
        await condition(() => this.approvals.settled());
        await this.activities.cancelTurn({ runId, action: turn.cancel });
      } else if (err instanceof ApplicationFailure && err.type === BUDGET_WAIT_TIMEOUT) {
        const reason = { code: BUDGET_WAIT_TIMEOUT, message: err.message };
        await this.activities.cancelTurn({ runId, action: 'interrupt', reason });
      } else await this.activities.finishTurn({ runId, status: 'failed', error: turnError(err) });
    } finally {
      this.pending = 'none';
      this.current = undefined;
    }
  }

  private async steps(runId: string): Promise<void> {
    const { callModel, listTools, summarizeHistory, runToolCalls } = this.activities;
    let corrected = false;
    let summarized = false;
    for (this.step = 1; ; this.step++) {
      this.pending = 'model_call';
      // Step 1 also starts the turn: it pins the agent's plan on the run.
      const call = () => callModel(runId, this.step, summarized);
      const result = await this.withinBudget(runId, 'budget', await call(), call);
      // The final answer's activity has already recorded the run as completed.
      if (result.kind === 'final' || result.kind === 'over') return;
      if (result.kind === 'list_tools') {
        this.pending = 'list_tools';
        await this.listAuthorized(runId, await listTools(runId));
        this.step--;
        continue;
      }
      if (result.kind === 'summarize') {
        this.pending = 'summarize';
        const summarize = () => summarizeHistory(runId);
        await this.withinBudget(runId, 'summary-budget', await summarize(), summarize);
        summarized = true;
        this.step--;
        continue;
      }
      if (result.kind === 'awaiting_budget')
        throw ApplicationFailure.nonRetryable('budget wait not patched', 'internal');
      if (result.kind === 'invalid_output') {
        if (corrected) throw schemaMismatch(result.errors);
        // One corrective retry, which does not count as an iteration.
        corrected = true;
        continue;
      }
      this.pending = 'tools';
      if (this.step >= result.maxIterations) {
        await runToolCalls(runId, this.step, 'maximum iterations reached');
        throw ApplicationFailure.nonRetryable('maximum iterations reached', 'max_iterations', {
          max_iterations: result.maxIterations,
        });
      }
      // Histories written before agent tools answered every call in one activity: replay them as they ran.
      if (patched(AGENT_TOOLS_PATCH))
        await this.runTools(runId, this.step, result.calls, result.approvalTimeoutMs);
      else await runToolCalls(runId, this.step);
    }
  }

  /**
   * While the step's call does not fit in a budget the run waits (see
   * BudgetWait), then calls again; the agent's budget_wait_timeout_ms,
   * counted from the first wait, cancels the run.
   */
  private async withinBudget<T>(runId: string, what: string, first: T, again: () => Promise<T>): Promise<T> {
    let result = first;
    let deadline: number | null | undefined;
    for (let attempt = 1; awaitingBudget(result) && patched(BUDGET_WAIT_PATCH); attempt++) {
      if (deadline === undefined)
        deadline = result.waitTimeoutMs !== null ? Date.now() + result.waitTimeoutMs : null;
      this.pending = 'awaiting_budget';
      const key = `${this.step}.${what}.${attempt}`;
      if ((await this.waits.budget.wait(runId, this.step, result, deadline, key)) === 'timeout')
        throw ApplicationFailure.nonRetryable(
          "the run waited for budget longer than the agent's budget_wait_timeout_ms",
          BUDGET_WAIT_TIMEOUT,
        );
      this.pending = 'model_call';
      result = await again();
    }
    return result;
  }

  /**
   * While a server the agent uses wants authorization, the turn waits for
   * the flow to complete, then lists again; after the agent's
   * authorization_timeout_ms it goes on without that server's tools.
   */
  private async listAuthorized(runId: string, first: unknown): Promise<void> {
    let listed = first;
    for (let attempt = 1; awaitingAuthorization(listed) && patched(MCP_AUTHORIZATION_PATCH); attempt++) {
      this.pending = 'awaiting_authorization';
      const key = `${this.step}.authorization.list.${attempt}`;
      const woken = await this.waits.authorization.wait(
        runId,
        this.step,
        listed.details,
        listed.timeoutMs,
        key,
      );
      this.pending = 'list_tools';
      listed = await this.activities.listTools(runId, woken === undefined);
    }
  }

  /**
   * One MCP call, and the waits it may meet: a call whose outcome is unknown
   * waits for a person (`retry` calls it again, `supply` answers it, a
   * timeout fails it); a server that wants authorization, for the OAuth flow
   * (then the call is made again; a timeout fails it); a server's question
   * the person did not answer while the call waited connected, for the answer
   * (then the call is made again with it; a timeout declines). A call its
   * server runs as a task is followed on durable timers (followMcpTask).
   */
  private async mcpCall(runId: string, step: number, call: ToolCallPlan): Promise<void> {
    const { answerToolCalls, runMcpTool, toolCallOptions } = this.activities;
    const options = { ...toolCallOptions, summary: `MCP ${call.name}` };
    const answer = (output: string, isError: boolean) =>
      answerToolCalls({ runId, step, answers: [{ id: call.id, name: call.name, output, isError }] });
    const inputs: InputAnswer[] = [];
    const again = (force?: boolean) =>
      runMcpTool.executeWithOptions(options, [
        { runId, step, callId: call.id, ...(force ? { force } : {}), ...(inputs.length ? { inputs } : {}) },
      ]);
    let outcome = await runMcpTool.executeWithOptions(options, [{ runId, step, callId: call.id }]);
    for (let attempt = 1; ; attempt++) {
      if (awaitingDecision(outcome) && patched(TOOL_DECISION_PATCH)) {
        this.pending = 'awaiting_decision';
        const key = `${step}.decision.${call.id}.${attempt}`;
        const decision = await this.waits.decision.wait(runId, step, outcome.details, outcome.timeoutMs, key);
        this.pending = 'tools';
        if (decision?.action === 'retry') {
          outcome = await again(true);
          continue;
        }
        if (decision?.result) return answer(decision.result.output, decision.result.is_error);
        return answer(
          "the call's outcome is unknown and no decision came within the agent's decision_timeout_ms",
          true,
        );
      }
      if (awaitingAuthorization(outcome) && patched(MCP_AUTHORIZATION_PATCH)) {
        this.pending = 'awaiting_authorization';
        const key = `${step}.authorization.${call.id}.${attempt}`;
        const woken = await this.waits.authorization.wait(
          runId,
          step,
          outcome.details,
          outcome.timeoutMs,
          key,
        );
        this.pending = 'tools';
        if (woken === undefined) return answer(unauthorizedAnswer(outcome.details), true);
        outcome = await again();
        continue;
      }
      if (awaitingInput(outcome) && patched(MCP_INPUT_PATCH)) {
        this.pending = 'awaiting_input';
        const key = `${step}.input.${call.id}.${outcome.seq}`;
        const given = await this.waits.input.wait(
          runId,
          step,
          outcome.details,
          outcome.timeoutMs,
          key,
          (a) => ({
            action: a?.action ?? 'decline',
          }),
        );
        this.pending = 'tools';
        inputs[outcome.seq - 1] = given ?? { action: 'decline' };
        outcome = await again();
        continue;
      }
      if (outcome.kind === 'task' && patched(MCP_TASKS_PATCH))
        return followMcpTask(this.activities, runId, step, call, outcome);
      return;
    }
  }

  /**
   * The step's tool calls, in the model's order: each runs as its own
   * activity (sandbox commands show their command in the workflow's history
   * and UI); calls that need approval wait for a person's decision first,
   * or until the agent's approval timeout declines them.
   */
  private async runTools(
    runId: string,
    step: number,
    calls: ToolCallPlan[],
    approvalTimeoutMs: number | null,
  ): Promise<void> {
    const { answerToolCalls, runSandboxCommand, toolCallOptions } = this.activities;
    const asking = calls.filter((c) => c.approval);
    let decisions = new Map<string, ApprovalDecision>();
    if (asking.length) {
      this.pending = 'awaiting_approval';
      decisions = await this.approvals.pause(runId, step, asking, approvalTimeoutMs);
    }
    this.pending = 'tools';
    // Sub-agent calls run beside the others (each a child workflow); the step waits for all of them.
    const children: Array<Promise<void>> = [];
    try {
      for (const call of calls) {
        const decision = decisions.get(call.id);
        if (call.kind === 'invalid' || decision?.decision === 'rejected') {
          await answerToolCalls({ runId, step, answers: [unrunAnswer(call, decision, approvalTimeoutMs)] });
        } else if (call.kind === 'sandbox') {
          await runSandboxCommand.executeWithOptions(
            { ...toolCallOptions, summary: `$ ${oneLine(call.command ?? '')}` },
            [{ runId, step, callId: call.id, command: call.command ?? '' }],
          );
        } else if (call.kind === 'sub_agent' && patched(SUB_AGENTS_PATCH)) {
          children.push(this.subAgents.call(runId, step, call, () => this.current?.cancel ?? 'interrupt'));
        } else await this.mcpCall(runId, step, call);
      }
    } finally {
      await settle(children);
    }
  }
}
