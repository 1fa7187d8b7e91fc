/**
 * The activity of workflows/workspace-copy.workflow.ts: a session's sandbox
 * workspace copied into the same agent's session of a forked conversation.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Logger } from '../../core/logger.js';
import type { CopyWorkspaceInput, CopyWorkspaceResult } from '../../workflows/workspace-copy.definitions.js';
import { SandboxError } from '../sandbox/errors.js';
import type { SandboxManager } from '../sandbox/sandbox-manager.js';

export interface WorkspaceCopyDeps {
  logger: Logger;
  sandbox?: SandboxManager;
}

export function createWorkspaceCopyActivities(deps: WorkspaceCopyDeps) {
  return {
    /**
     * `absent` when there is nothing to copy: no workspace, or a worker
     * without sandboxes. Permanent sandbox errors (the backend cannot copy,
     * cp failed) are not retried.
     */
    async copySandboxWorkspace(
      input: CopyWorkspaceInput,
    ): Promise<Extract<CopyWorkspaceResult['outcome'], 'copied' | 'absent'>> {
      const sandbox = deps.sandbox;
      if (!sandbox?.copyWorkspace || sandbox.backend === 'disabled') return 'absent';
      const { projectId, agentId } = input;
      try {
        const outcome = await sandbox.copyWorkspace(
          { projectId, agentId, conversationId: input.fromConversationId },
          { projectId, agentId, conversationId: input.toConversationId },
        );
        deps.logger.info({ ...input, outcome }, 'sandbox workspace copied to a fork');
        return outcome;
      } catch (err) {
        if (err instanceof SandboxError && err.permanent)
          throw ApplicationFailure.nonRetryable(err.message, err.name);
        throw err;
      }
    },
  };
}

export type WorkspaceCopyActivities = ReturnType<typeof createWorkspaceCopyActivities>;
