/**
 * The session workflow's contract: its input, Update, Query and the plans its
 * activities return. Shared by the workflow, the activities and the API (which
 * sends the Update); pure types and definitions only.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';

export const SESSION_WORKFLOW_TYPE = 'sessionWorkflow';

export { sessionWorkflowId } from '../temporal.config.js';

export interface SessionSettings {
  /** The session completes after this long without a message; the next message starts it again. */
  idleTimeoutMs: number;
  /** Continue-as-new after this many turns in one run, or sooner when Temporal suggests it. */
  continueAsNewAfterTurns: number;
  /** Heartbeat timeout of model calls: how soon a call on a dead worker is retried elsewhere. */
  modelHeartbeatTimeoutMs: number;
  /** Heartbeat timeout of tool calls (MCP, sandbox); the model's when absent (sessions started before it existed). */
  toolHeartbeatTimeoutMs?: number;
}

/** Ids and small state only: transcripts live in Postgres. */
export interface SessionInput {
  projectId: string;
  agentId: string;
  conversationId: string;
  threadId: string;
  settings: SessionSettings;
  /** Turns completed by earlier runs of this session (continue-as-new carries it). */
  turnsCompleted?: number;
}

export interface ConverseUpdateArgs {
  runId: string;
}

/** Returned when the turn has ended; the API waits only for the Update to be accepted. */
export interface ConverseUpdateResult {
  runId: string;
  /** Runs that were ahead of this one in the session's queue when it arrived. */
  position: number;
}

export type PendingStep =
  | 'none'
  | 'starting'
  | 'summarize'
  | 'list_tools'
  | 'model_call'
  | 'awaiting_approval'
  | 'awaiting_budget'
  | 'awaiting_decision'
  | 'awaiting_authorization'
  | 'awaiting_input'
  | 'tools'
  | 'finishing';

export interface SessionState {
  status: 'idle' | 'running';
  current_run_id: string | null;
  /** Number of the turn in progress (or the last one, when idle), counted over the session's life. */
  current_turn: number;
  /** Model call number within the current turn. */
  current_step: number;
  pending_step: PendingStep;
  queued_run_ids: string[];
  /** Tool calls of the current run waiting for a person's decision. */
  awaiting_approval_call_ids: string[];
}

export const converseUpdate = defineUpdate<ConverseUpdateResult, [ConverseUpdateArgs]>('converse');

/** A person's decision on some of a paused run's tool calls (POST /runs/{id}/approvals). */
export interface ApprovalArgs {
  runId: string;
  approved_call_ids: string[];
  rejected_call_ids: string[];
}

export interface ApprovalResult {
  /** `running` once every pending call has a decision. */
  status: 'running' | 'awaiting_approval';
  pending_call_ids: string[];
}

export const approvalUpdate = defineUpdate<ApprovalResult, [ApprovalArgs]>('approve');

/** How a cancelled run ends: `interrupt` keeps what it produced, `rollback` removes it from the conversation. */
export const CANCEL_ACTIONS = ['interrupt', 'rollback'] as const;
export type CancelAction = (typeof CANCEL_ACTIONS)[number];

/** POST /runs/{id}/cancel: stop the run in any state. */
export interface CancelRunArgs {
  runId: string;
  action: CancelAction;
}

/** Returned once the run has ended (cancelled, or finished on its own just before). */
export interface CancelRunResult {
  runId: string;
}

export const cancelRunUpdate = defineUpdate<CancelRunResult, [CancelRunArgs]>('cancelRun');

/** Who ended a run's wait for budget: a person (POST /runs/{id}/budget), a raised budget, the next period. */
export type BudgetWake = 'user' | 'budget_raised' | 'period';

/** Wakes a run waiting for budget; the API has checked that the call now fits. */
export interface BudgetResumeArgs {
  runId: string;
  by: Exclude<BudgetWake, 'period'>;
}

/** Returned once the run's wait has ended (its resumption recorded). */
export interface BudgetResumeResult {
  runId: string;
}

export const budgetResumeUpdate = defineUpdate<BudgetResumeResult, [BudgetResumeArgs]>('resumeBudget');

/** POST /runs/{id}/decision on a tool call whose outcome is unknown: call it again, or supply its result. */
export const TOOL_DECISION_ACTIONS = ['retry', 'supply'] as const;
export type ToolDecisionAction = (typeof TOOL_DECISION_ACTIONS)[number];

export interface ToolDecisionArgs {
  runId: string;
  action: ToolDecisionAction;
  /** `supply`: what the call answers the model. */
  result?: { output: string; is_error: boolean };
}

export interface ToolDecisionResult {
  runId: string;
}

export const toolDecisionUpdate = defineUpdate<ToolDecisionResult, [ToolDecisionArgs]>('decideToolCall');
/** Wakes a run waiting for an MCP server's authorization: the flow completed (the API's callback). */
export interface AuthorizationResumeArgs {
  runId: string;
}

export const authorizationResumeUpdate = defineUpdate<{ runId: string }, [AuthorizationResumeArgs]>(
  'resumeAuthorization',
);

/** POST /runs/{id}/input: a person's answer to the question an MCP server asked. */
export const INPUT_ACTIONS = ['accept', 'decline', 'cancel'] as const;
export type InputAction = (typeof INPUT_ACTIONS)[number];

export interface InputAnswer {
  action: InputAction;
  /** `accept`: the answer, its schema's defaults applied and validated by the API. */
  content?: Record<string, unknown>;
}

export interface InputAnswerArgs extends InputAnswer {
  runId: string;
}

export const inputAnswerUpdate = defineUpdate<{ runId: string }, [InputAnswerArgs]>('answerInput');

export const sessionStateQuery = defineQuery<SessionState>('state');

/** What one model call produced, in a few fields. */
export type ModelStepResult =
  /** The answer: `callModel` has also recorded the run as completed. */
  | { kind: 'final' }
  /** The run was already over, or could not start (recorded as failed): nothing more to do. */
  | { kind: 'over' }
  /** The thread must be summarized first (llm summarizer), then step 1 called again. */
  | { kind: 'summarize' }
  /** The agent has MCP servers and this turn has not listed their tools yet: list, then call step 1 again. */
  | { kind: 'list_tools' }
  | {
      kind: 'tool_calls';
      count: number;
      maxIterations: number;
      calls: ToolCallPlan[];
      /** The agent's approval_timeout_ms: undecided calls are declined after it (null: wait for ever). */
      approvalTimeoutMs: number | null;
    }
  | { kind: 'invalid_output'; errors: string[] }
  /**
   * The call's worst case does not fit in a budget (the agent's, the
   * conversation's or the key's): nothing was sent; the run waits, then the
   * step is called again.
   */
  | {
      kind: 'awaiting_budget';
      /** The budget and its figures, as the run's pause shows them. */
      shortfall: Record<string, unknown>;
      /** Epoch ms the budget's next period begins (null: `total`). */
      resetsAt: number | null;
      /** The agent's budget_wait_timeout_ms: the run is cancelled after waiting that long (null: never). */
      waitTimeoutMs: number | null;
    };

/**
 * An MCP server wants OAuth authorization for the run's calls (listing or
 * calling): the run waits until the flow completes, then tries again.
 */
export interface AwaitingAuthorization {
  kind: 'awaiting_authorization';
  /** `server_id`, `server_name`, `end_user_id`, `authorization_url`: as the run's pause shows them. */
  details: Record<string, unknown>;
  /** The agent's authorization_timeout_ms: the call fails after it. */
  timeoutMs: number;
}

/** What runMcpTool returns: the call's result was stored, or it waits for a person. */
export type McpToolOutcome =
  | { is_error: boolean; kind?: undefined }
  | {
      kind: 'awaiting_decision';
      /** The call, as the run's pause shows it. */
      details: Record<string, unknown>;
      /** The agent's decision_timeout_ms: the call fails after it (null: wait for ever). */
      timeoutMs: number | null;
    }
  | AwaitingAuthorization
  | {
      /**
       * The server asked a question the person has not answered while the
       * call waited connected: the session waits for the answer, then calls
       * again with it (the server's question is answered from it at once).
       */
      kind: 'awaiting_input';
      /** The question (`message`, `mode`, `requested_schema` or `url`) and the call, as the run's pause shows them. */
      details: Record<string, unknown>;
      /** The agent's input_timeout_ms: the question is declined after it. */
      timeoutMs: number;
      /** Tells this question's pause apart from the call's others. */
      seq: number;
    }
  | McpCallTask;

/**
 * The server runs the call as a task (the MCP tasks extension): the session
 * polls it (`pollMcpTask`) on durable timers until it is over.
 */
export interface McpCallTask {
  kind: 'task';
  serverId: string;
  taskId: string;
  /** The wait before the first poll. */
  pollMs: number;
  /** The call is given up (the task cancelled, the model told) after this long: the task's ttl, at most MCP_TASK_MAX_MS. */
  timeoutMs: number;
  /** Epoch ms the call started (its duration is measured when the task ends). */
  startedAt: number;
}

export interface McpTaskArgs {
  runId: string;
  step: number;
  callId: string;
  task: McpCallTask;
  /** The status message the previous poll saw: a new one is a progress event. */
  lastMessage?: string;
}

/** One poll: the task is over (its result stored), or when to poll again. */
export type McpTaskPoll =
  { kind: 'done'; is_error: boolean } | { kind: 'working'; pollMs: number; message?: string };

/** What listTools returns: how many tools it offered, or a server that must be authorized first. */
export type ListToolsResult = { offered: number; failedServers: number } | AwaitingAuthorization;

/** One tool call of a step, as the workflow runs it. */
export interface ToolCallPlan {
  id: string;
  name: string;
  /**
   * `invalid`: unknown tool or bad arguments, answered with `error` without running;
   * `sub_agent`: another agent's turn, run by a child workflow (sub-agent-call.workflow.ts).
   */
  kind: 'mcp' | 'sandbox' | 'invalid' | 'sub_agent';
  /** Waits for a person's decision first. */
  approval: boolean;
  /** Sandbox calls: the command (shown in the workflow's history). */
  command?: string;
  error?: string;
  /** Sub-agent calls: the agent called. */
  agentId?: string;
  /** Sub-agent calls: how many the turn may make (SUB_AGENT_MAX_FANOUT as the turn started); those past it are refused. */
  maxCalls?: number;
}

/** A call answered without running it (declined, invalid, or the turn is ending). */
export interface ToolAnswer {
  id: string;
  name: string;
  output: string;
  isError: boolean;
}

export interface ToolCallArgs {
  runId: string;
  step: number;
  callId: string;
  /** A person chose to call it again although its outcome is unknown. */
  force?: boolean;
  /** Answers to the questions the server asked during this call, in order (given while the session waited). */
  inputs?: InputAnswer[];
}

export interface SandboxCallArgs extends ToolCallArgs {
  command: string;
}

export interface ApprovalDecision {
  id: string;
  decision: 'approved' | 'rejected';
  /** `user`, or `timeout` when approval_timeout_ms declined it. */
  by: 'user' | 'timeout';
}

export interface CancelTurnArgs {
  runId: string;
  action: CancelAction;
  /** Why the run was cancelled when no one asked (a wait that timed out): its `error`. */
  reason?: { code: string; message: string };
}

/** A run starts waiting (for budget, for a decision): status, `pause` and `run.paused`, once per `key`. */
export interface PauseRunArgs {
  runId: string;
  step: number;
  reason: 'budget' | 'decision' | 'authorization' | 'input';
  details: Record<string, unknown>;
  /** Epoch ms the wait ends on its own, or null. */
  timeoutAt: number | null;
  /** Tells this pause's event apart from the turn's others. */
  key: string;
}

/** The wait has ended: running again and `run.resumed {reason, by}`. */
export interface ResumeRunArgs {
  runId: string;
  step: number;
  reason: 'budget' | 'decision' | 'authorization' | 'input';
  by: string;
  key: string;
  /** Said in `run.resumed` (a decision's action). */
  details?: Record<string, unknown>;
}

export interface FinishTurnArgs {
  runId: string;
  status: 'completed' | 'failed';
  error?: { code: string; message: string; details?: unknown };
}
