/**
 * The contract of the workflow that deletes a conversation: its input, the
 * Update the API waits on, and the shapes its activities exchange. Shared by
 * the workflow, the activities and the API; pure types and definitions only.
 */
import { defineUpdate } from '@temporalio/workflow';

export const DELETE_CONVERSATION_WORKFLOW_TYPE = 'deleteConversationWorkflow';

export { agentOfSessionWorkflowId, deleteConversationWorkflowId } from '../temporal.config.js';
export type { DeletedData, SweepSpansArgs } from '../core/repositories/conversations.repository.js';

/** One agent's session of the conversation. */
export interface ConversationSession {
  agentId: string;
  /** `session/<agent_id>/<conversation_id>`. */
  workflowId: string;
}

export interface DeleteConversationInput {
  projectId: string;
  conversationPk: string;
  /** The client's id: sandboxes, session workflows and spans are named by it. */
  conversationId: string;
  sessions: ConversationSession[];
  /** Waits before each sweep for spans that finished after the delete; defaults to LATE_SPAN_SWEEPS_MS. */
  lateSpanSweepsMs?: number[];
}

/**
 * Spans are exported a second or so after they end, and a step cut short by
 * the delete may end later still (a model call or tool call runs to its own
 * timeout, at most 15 minutes, when it does not notice the cancellation).
 */
export const LATE_SPAN_SWEEPS_MS = [10_000, 16 * 60_000];

export interface DeleteConversationResult {
  deleted: boolean;
}

/** Answers once the conversation's rows are gone (sessions, sandboxes and rows, in that order); the API waits on it. */
export const awaitDeletionUpdate = defineUpdate<DeleteConversationResult>('awaitDeletion');
