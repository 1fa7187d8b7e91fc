import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { WorkspaceCopyActivities } from '../activities/session/workspace-copy.js';
import {
  COPY_UNSUPPORTED_FAILURE,
  type CopyWorkspaceInput,
  type CopyWorkspaceResult,
} from './workspace-copy.definitions.js';

/*
 * A fork waits for this: a few quick retries for an engine that hiccups, and
 * an answer rather than a hang when the copy cannot be made (the activity
 * throws non-retryable failures for those).
 */
const { copySandboxWorkspace } = proxyActivities<WorkspaceCopyActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumAttempts: 3 },
});

/**
 * Copies one agent's session workspace of a conversation into the same
 * agent's session of its fork (docs/interface.md#forking-a-conversation).
 */
export async function copyWorkspaceWorkflow(input: CopyWorkspaceInput): Promise<CopyWorkspaceResult> {
  try {
    return { outcome: await copySandboxWorkspace(input) };
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const cause = err.cause instanceof ApplicationFailure ? err.cause : undefined;
    const reason = cause?.message ?? err.message;
    return { outcome: cause?.type === COPY_UNSUPPORTED_FAILURE ? 'unsupported' : 'failed', reason };
  }
}
