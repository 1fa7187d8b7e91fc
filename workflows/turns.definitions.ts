/**
 * The contract of the workflows that start turns from the worker: a cron's
 * scheduled turn and a turn delivered after a delay. Shared by the
 * workflows, their activities and the API; pure types and definitions only.
 */

export const CRON_TURN_WORKFLOW_TYPE = 'cronTurnWorkflow';
export const DELAYED_TURN_WORKFLOW_TYPE = 'delayedTurnWorkflow';

/** The Temporal Schedule of a cron (its action's workflow ids start with it too). */
export const cronScheduleId = (cronId: string): string => `cron/${cronId}`;

/** One delayed delivery per run: starting it twice is the same workflow. */
export const delayedTurnWorkflowId = (runId: string): string => `delayed-turn/${runId}`;

/** The namespace of the conversations a cron without a thread starts (one per run). */
export const CRON_NAMESPACE = 'cron';

export interface CronTurnInput {
  cronId: string;
}

/** What one firing of a cron did. */
export type CronTurnResult =
  | {
      status: 'started';
      runId: string;
      projectId: string;
      conversationId: string;
      runStatus: string;
      /** A stateless cron's conversation that goes once the run has ended (`on_run_completed: delete`). */
      deleteConversation: boolean;
    }
  | { status: 'skipped'; reason: string };

export interface DelayedTurnInput {
  runId: string;
  /** How long to wait before the run goes to its session. */
  delaySeconds: number;
}

export interface DelayedTurnResult {
  delivered: boolean;
  /** Why not, when it was not (the run ended meanwhile, e.g. cancelled, or is gone). */
  reason?: string;
}
