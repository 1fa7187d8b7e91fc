/**
 * The session's activities, composed from one module per activity or step.
 * Each takes ids, reads what it needs from Postgres, and is idempotent: a
 * retry after a crash finds the rows its earlier attempt wrote (messages by
 * run and step, events by key) and does not write, or call the model, twice.
 *
 * The keys of the returned object are the activity names running workflows
 * call: renaming one breaks their replay.
 */
import { createApprovalActivities } from './approvals.js';
import { createCancelActivities } from './cancel.js';
import { createFinishActivities } from './finish.js';
import { createListToolsActivities } from './list-tools.js';
import { createMcpCallActivities } from './mcp-call.js';
import { createMcpTaskActivities } from './mcp-task.js';
import { createModelCallActivities } from './model-call.js';
import { createRunWaitActivities } from './run-waits.js';
import { createSandboxCallActivities } from './sandbox-call.js';
import { createSummarizeActivities } from './summarize.js';
import { createToolAnswerActivities } from './tool-answers.js';
import type { SessionDeps } from './types.js';

export function createSessionActivities(deps: SessionDeps) {
  return {
    ...createSummarizeActivities(deps), // summarizeHistory
    ...createModelCallActivities(deps), // callModel
    ...createToolAnswerActivities(deps), // runToolCalls, answerToolCalls
    ...createListToolsActivities(deps), // listTools
    ...createMcpCallActivities(deps), // runMcpTool
    ...createMcpTaskActivities(deps), // pollMcpTask, cancelMcpTask
    ...createSandboxCallActivities(deps), // runSandboxCommand
    ...createApprovalActivities(deps), // pauseForApproval, recordApprovals
    ...createFinishActivities(deps), // finishTurn
    ...createCancelActivities(deps), // cancelTurn
    ...createRunWaitActivities(deps), // pauseRun, resumeRun
  };
}

export type SessionActivities = ReturnType<typeof createSessionActivities>;
