/**
 * The eval workflows' contract, for the API (which starts an eval) and the
 * activities (which implement its steps).
 */

/** The workflow functions' names (workflows/index.ts exports them under these names). */
export const EVAL_WORKFLOW_TYPE = 'evalWorkflow';
export const EVAL_CASE_WORKFLOW_TYPE = 'evalCaseWorkflow';

/** One per eval; its children are `eval/<eval id>/<case>/<variant>`. */
export const evalWorkflowId = (evalId: string) => `eval/${evalId}`;
export const evalCaseWorkflowId = (evalId: string, caseIndex: number, variantIndex: number) =>
  `eval/${evalId}/${caseIndex}/${variantIndex}`;

/**
 * Where a case's replay activity runs: a task queue of its own beside the
 * sessions' (`<queue>-eval-replays`, polled by the same worker processes), so
 * replays waiting on their sessions never hold the activity slots those
 * sessions' own activities need.
 */
export const evalReplayTaskQueue = (taskQueue: string) => `${taskQueue}-eval-replays`;

/** The scratch conversation a case's variant is replayed in: one per eval, case and variant. */
export const scratchConversationId = (evalId: string, caseIndex: number, variantIndex: number) =>
  `eval-${evalId}-${caseIndex}-${variantIndex}`;

export interface EvalInput {
  evalId: string;
  /** How often a turn's activity looks at its run while the session runs it. */
  pollMs: number;
  /** A turn's activity heartbeats; a dead worker's turn is retried elsewhere after this long. */
  heartbeatTimeoutMs: number;
}

/** One recorded conversation (or dataset row) replayed against one variant. */
export interface EvalCaseInput {
  evalId: string;
  caseIndex: number;
  variantIndex: number;
  turns: number;
  pollMs: number;
  heartbeatTimeoutMs: number;
}

/** The turn's key: one result row per (eval, variant, case, turn). */
export interface EvalTurnArgs {
  evalId: string;
  caseIndex: number;
  variantIndex: number;
  turnIndex: number;
  pollMs: number;
}

/** What a turn's activity tells its case: go on, or stop (diverged, failed, or the eval is over). */
export interface EvalTurnOutcome {
  status: 'completed' | 'failed' | 'diverged' | 'skipped';
}

/** What the start activity found: the eval's cases and its variant count; `over` when it already ended. */
export interface EvalPlan {
  over: boolean;
  cases: number[];
  variants: number;
  concurrency: number;
}
