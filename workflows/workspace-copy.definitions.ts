/**
 * The contract of the workflow that copies a session's sandbox workspace to
 * a forked conversation's session: its type, id, input and result. Shared by
 * the workflow, its activity and the API (which starts it and waits for it);
 * pure types and definitions only.
 */

export const COPY_WORKSPACE_WORKFLOW_TYPE = 'copyWorkspaceWorkflow';

/** By the fork's key: one copy per forked conversation. */
export const copyWorkspaceWorkflowId = (forkConversationPk: string) => `workspace-copy/${forkConversationPk}`;

export interface CopyWorkspaceInput {
  projectId: string;
  agentId: string;
  /** The client ids of the original conversation and of the fork: sandboxes are named by them. */
  fromConversationId: string;
  toConversationId: string;
}

/**
 * `copied`: the fork's workspace holds the files; `absent`: the session had
 * no workspace (or the worker has no sandboxes), nothing to copy;
 * `unsupported`: the sandbox backend cannot copy one (kubernetes); `failed`:
 * the copy could not be made. `reason` says why.
 */
export type CopyWorkspaceResult =
  { outcome: 'copied' | 'absent' } | { outcome: 'unsupported' | 'failed'; reason: string };

/** The activity's failure type (its error class) when the backend cannot copy. */
export const COPY_UNSUPPORTED_FAILURE = 'SandboxCopyUnsupportedError';
