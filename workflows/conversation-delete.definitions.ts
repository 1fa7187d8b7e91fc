/**
 * The contract of the workflow that deletes a conversation: its input, the
 * Update the API waits on, and the shapes its activities exchange. Shared by
 * the workflow, the activities and the API; pure types and definitions only.
 */
import { defineUpdate } from '@temporalio/workflow';

export const DELETE_CONVERSATION_WORKFLOW_TYPE = 'deleteConversationWorkflow';

export { agentOfSessionWorkflowId, deleteConversationWorkflowId } from '../temporal.config.js';
import type { DeletedData } from '../core/repositories/conversations.repository.js';
export type { DeletedData, SweepSpansArgs } from '../core/repositories/conversations.repository.js';

/** One agent's session of the conversation, or of a sub-agent conversation below it. */
export interface ConversationSession {
  agentId: string;
  /** `session/<agent_id>/<conversation_id>`. */
  workflowId: string;
  /** The client's id of a sub-agent conversation the session is of; the deleted conversation's when absent. */
  conversationId?: string;
}

export interface DeleteConversationInput {
  projectId: string;
  conversationPk: string;
  /** The client's id: sandboxes, session workflows and spans are named by it. */
  conversationId: string;
  sessions: ConversationSession[];
  /**
   * Set by the workflow (SUB_AGENT_CONVERSATIONS_PATCH): the sub-agent
   * conversations below the conversation are deleted with it, in the same
   * transaction. Absent in deletions started before: the conversation alone.
   */
  withSubAgentConversations?: boolean;
  /** Waits before each sweep for spans that finished after the delete; defaults to LATE_SPAN_SWEEPS_MS. */
  lateSpanSweepsMs?: number[];
}

/**
 * Spans are exported a second or so after they end, and a step cut short by
 * the delete may end later still (a model call or tool call runs to its own
 * timeout, at most 15 minutes, when it does not notice the cancellation).
 */
export const LATE_SPAN_SWEEPS_MS = [10_000, 16 * 60_000];

/** Marks deletions that take the sub-agent conversations below the conversation with it. */
export const SUB_AGENT_CONVERSATIONS_PATCH = 'delete-sub-agent-conversations';

/** What deleting the rows did; with the sub-agent conversations, what kept it from deleting. */
export interface DeletedConversationData extends DeletedData {
  /** Sessions of the tree not yet ended (a sub-agent call stored one meanwhile): nothing was deleted. */
  unended?: ConversationSession[];
  /** The client's ids of the sub-agent conversations deleted with it. */
  subAgentConversationIds?: string[];
}

export interface DeleteConversationResult {
  deleted: boolean;
}

/** Answers once the conversation's rows are gone (sessions, sandboxes and rows, in that order); the API waits on it. */
export const awaitDeletionUpdate = defineUpdate<DeleteConversationResult>('awaitDeletion');
