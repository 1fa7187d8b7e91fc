/**
 * The sandbox part of a fork: the agent's session workspace copied into the
 * fork's session by a worker (workflows/workspace-copy.workflow.ts; the API
 * never touches sandboxes itself). The fork answers once the copy is done, so
 * the fork's first turn finds the files.
 */
import type { Client } from '@temporalio/client';
import { AppError, BadGatewayError, ServiceUnavailableError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import {
  COPY_WORKSPACE_WORKFLOW_TYPE,
  copyWorkspaceWorkflowId,
  type CopyWorkspaceInput,
  type CopyWorkspaceResult,
} from '../../workflows/workspace-copy.definitions.js';

export interface WorkspaceCopies {
  client: Client;
  taskQueue: string;
  /** How long a fork waits for a worker to copy the workspace before answering 503. */
  waitMs: number;
  logger?: Logger;
}

/** Thrown when the sandbox backend cannot copy a workspace (kubernetes) and there is one to copy (501). */
export class WorkspaceCopyUnsupportedError extends AppError {
  constructor(reason: string) {
    super(501, 'Not implemented', { workspace: reason }, true);
  }
}

/**
 * Copies the workspace, or throws: 501 when the backend cannot, 502 when the
 * copy failed, 503 when no worker finished it in time (or Temporal is away).
 */
export async function copyForkWorkspace(
  copies: WorkspaceCopies,
  forkPk: string,
  input: CopyWorkspaceInput,
): Promise<CopyWorkspaceResult['outcome']> {
  const { client, taskQueue, waitMs, logger } = copies;
  let result: CopyWorkspaceResult;
  try {
    result = await client.withDeadline(Date.now() + waitMs, (): Promise<CopyWorkspaceResult> =>
      client.workflow.execute(COPY_WORKSPACE_WORKFLOW_TYPE, {
        workflowId: copyWorkspaceWorkflowId(forkPk),
        taskQueue,
        args: [input],
        // A copy that outlives the wait must not run on forever with no worker.
        workflowExecutionTimeout: '15 minutes',
      }),
    );
  } catch (err) {
    logger?.error({ err, forkPk }, 'fork workspace copy did not finish');
    throw new ServiceUnavailableError({
      workspace: 'the sandbox workspace was not copied in time; the fork was not made, try again',
    });
  }
  if (result.outcome === 'unsupported') throw new WorkspaceCopyUnsupportedError(result.reason);
  if (result.outcome === 'failed')
    throw new BadGatewayError({ workspace: `the sandbox workspace could not be copied: ${result.reason}` });
  return result.outcome;
}
