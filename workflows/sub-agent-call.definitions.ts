/**
 * The contract of a sub-agent call: the child workflow a session's turn
 * starts for each call of a sub-agent's tool. Shared by the session
 * workflow, the call's workflow and its activities; pure types and
 * definitions only.
 */
import { defineSignal } from '@temporalio/workflow';
import type { CancelAction } from './session.definitions.js';

export const SUB_AGENT_CALL_WORKFLOW_TYPE = 'subAgentCallWorkflow';

/** One workflow per call: a parent's turn repeated after a crash finds the same one. */
export const subAgentCallWorkflowId = (parentRunId: string, callId: string): string =>
  `sub-agent/${parentRunId}/${callId}`;

export interface SubAgentCallInput {
  /** The calling run, and the step and call of its model's answer. */
  parentRunId: string;
  step: number;
  callId: string;
  /** The caller's tool heartbeat timeout: how soon a wait on a dead worker moves on (30 s when absent). */
  heartbeatTimeoutMs?: number;
}

/** What the call did: the sub-agent's run and how it ended, or why none ran (answered to the model). */
export interface SubAgentCallResult {
  childRunId: string | null;
  status: string;
}

/** The sub-agent's run as its call's workflow starts it. */
export type SubAgentStart =
  | { kind: 'started'; runId: string }
  /** Nothing ran (the agent is gone, the call is not a sub-agent's): the model is told why. */
  | { kind: 'refused'; message: string };

/** The calling run is being cancelled: the sub-agent's run is cancelled the same way. */
export const cancelSubAgentCallSignal = defineSignal<[{ action: CancelAction }]>('cancelSubAgentCall');
