/**
 * The session workflow's contract: its input, Update, Query and the plans its
 * activities return. Shared by the workflow, the activities and the API (which
 * sends the Update); pure types and definitions only.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';

export const SESSION_WORKFLOW_TYPE = 'sessionWorkflow';

export const sessionWorkflowId = (agentId: string, conversationId: string) =>
  `session/${agentId}/${conversationId}`;

export interface SessionSettings {
  /** The session completes after this long without a message; the next message starts it again. */
  idleTimeoutMs: number;
  /** Continue-as-new after this many turns in one run, or sooner when Temporal suggests it. */
  continueAsNewAfterTurns: number;
  /** Heartbeat timeout of model calls: how soon a call on a dead worker is retried elsewhere. */
  modelHeartbeatTimeoutMs: number;
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

export type PendingStep = 'none' | 'starting' | 'summarize' | 'model_call' | 'tools' | 'finishing';

export interface SessionState {
  status: 'idle' | 'running';
  current_run_id: string | null;
  /** Number of the turn in progress (or the last one, when idle), counted over the session's life. */
  current_turn: number;
  /** Model call number within the current turn. */
  current_step: number;
  pending_step: PendingStep;
  queued_run_ids: string[];
}

export const converseUpdate = defineUpdate<ConverseUpdateResult, [ConverseUpdateArgs]>('converse');
export const sessionStateQuery = defineQuery<SessionState>('state');

/** What one model call produced, in a few fields. */
export type ModelStepResult =
  /** The answer: `callModel` has also recorded the run as completed. */
  | { kind: 'final' }
  /** The run was already over, or could not start (recorded as failed): nothing more to do. */
  | { kind: 'over' }
  /** The thread must be summarized first (llm summarizer), then step 1 called again. */
  | { kind: 'summarize' }
  | { kind: 'tool_calls'; count: number; maxIterations: number }
  | { kind: 'invalid_output'; errors: string[] };

export interface FinishTurnArgs {
  runId: string;
  status: 'completed' | 'failed';
  error?: { code: string; message: string; details?: unknown };
}
