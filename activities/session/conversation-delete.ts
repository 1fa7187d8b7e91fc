/**
 * The steps of deleting a conversation (workflows/conversation-delete.workflow.ts).
 * Each is idempotent: a retry after a crash finds its work done and does it
 * again at no harm.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { isGrpcServiceError, type Client } from '@temporalio/client';
import type { Db } from '../../core/db/knex.js';
import type { Logger } from '../../core/logger.js';
import { ConversationsRepository } from '../../core/repositories/conversations.repository.js';
import type {
  DeleteConversationInput,
  DeletedConversationData,
  SweepSpansArgs,
} from '../../workflows/conversation-delete.definitions.js';
import type { SandboxManager } from '../sandbox/sandbox-manager.js';

export interface ConversationDeleteDeps {
  db: Db;
  logger: Logger;
  /** Absent or disabled: there are no sandboxes to remove. */
  sandbox?: SandboxManager;
  /** The worker's client: sessions are terminated and their histories deleted through it. */
  temporal?: Client;
}

/** gRPC NOT_FOUND (code 5): the execution is gone already. */
const NOT_FOUND: number = 5;

export function createConversationDeleteActivities(deps: ConversationDeleteDeps) {
  const conversations = new ConversationsRepository(deps.db);

  async function deleteExecution(client: Client, workflowId: string, runId?: string): Promise<void> {
    try {
      await client.workflowService.deleteWorkflowExecution({
        namespace: client.options.namespace,
        workflowExecution: { workflowId, ...(runId ? { runId } : {}) },
      });
    } catch (err) {
      if (isGrpcServiceError(err) && Number(err.code) === NOT_FOUND) return;
      throw err;
    }
  }

  return {
    /**
     * Every run of each session workflow is deleted, the running one
     * terminated first (Temporal does that as part of the delete): no turn
     * goes on to write for a conversation being deleted, and the histories,
     * which hold the sandbox commands the model sent, go with it. Temporal
     * deletes a running run at once and a closed one a little later (after
     * its history service has acknowledged the run's close, ~1 minute on
     * the dev server). Returns the runs it asked Temporal to delete.
     */
    async endSessions({ sessions }: DeleteConversationInput): Promise<string[]> {
      const client = deps.temporal;
      if (!client)
        throw ApplicationFailure.nonRetryable('the worker has no Temporal client', 'no_temporal_client');
      const requested: string[] = [];
      for (const { workflowId } of sessions) {
        if (!/^[A-Za-z0-9._:/-]+$/.test(workflowId))
          throw ApplicationFailure.nonRetryable(`unexpected workflow id ${workflowId}`, 'bad_workflow_id');
        const runIds: string[] = [];
        for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
          runIds.push(run.runId);
        // The current run too: visibility may not list a run that started a moment ago.
        for (const runId of [...runIds, undefined]) await deleteExecution(client, workflowId, runId);
        requested.push(...runIds.map((runId) => `${workflowId}@${runId}`));
      }
      return requested;
    },

    /** Each session's sandbox and workspace (container and volume, pod and claim, or folder). */
    async removeSandboxes({ projectId, conversationId, sessions }: DeleteConversationInput): Promise<void> {
      const sandbox = deps.sandbox;
      if (!sandbox || sandbox.backend === 'disabled') return;
      for (const session of sessions)
        await sandbox.destroy({
          projectId,
          agentId: session.agentId,
          conversationId: session.conversationId ?? conversationId,
        });
    },

    /**
     * The rows and spans, in one transaction: the conversation's alone
     * (ConversationsRepository.deleteWithData), or with the sub-agent
     * conversations below it (deleteTreeWithData), unless one of their
     * sessions is not among those already ended.
     */
    async deleteConversationData(input: DeleteConversationInput): Promise<DeletedConversationData> {
      const root = { pk: input.conversationPk, project_id: input.projectId, id: input.conversationId };
      const data = input.withSubAgentConversations
        ? await conversations.deleteTreeWithData(root, new Set(input.sessions.map((s) => s.workflowId)))
        : await conversations.deleteWithData(root);
      deps.logger.info(
        {
          conversationPk: input.conversationPk,
          deleted: data.deleted,
          sessions: input.sessions.length,
          ...('subAgentConversationIds' in data
            ? { subAgentConversations: data.subAgentConversationIds }
            : {}),
          ...('unended' in data ? { unended: data.unended } : {}),
        },
        data.deleted ? 'conversation deleted' : 'conversation not deleted',
      );
      return data;
    },

    async sweepLateSpans(args: SweepSpansArgs): Promise<number> {
      return conversations.sweepSpans(args);
    },
  };
}

export type ConversationDeleteActivities = ReturnType<typeof createConversationDeleteActivities>;
