import type {
  ApprovalArgs,
  ApprovalResult,
  ConverseUpdateArgs,
  ConverseUpdateResult,
  SessionState,
} from '../session.definitions.js';
import { ApprovalGate, type ApprovalActivities } from './approval-gate.js';
import { TurnQueue } from './turn-queue.js';
import { TurnRunner, type TurnActivities } from './turn-runner.js';

export type SessionActivityStubs = TurnActivities & ApprovalActivities;

/**
 * One agent session's state and message handling, without Temporal's wiring
 * (session.workflow.ts registers these methods as its handlers). It holds ids
 * and counters only; transcripts are in Postgres.
 */
export class SessionEntity {
  readonly queue = new TurnQueue();
  private readonly approvals: ApprovalGate;
  private readonly turn: TurnRunner;
  /** Turns over the session's life, earlier workflow runs included. */
  turns: number;
  /** Turns in this workflow run, which decide when to continue as new. */
  turnsThisRun = 0;

  constructor(activities: SessionActivityStubs, turnsCompleted: number) {
    this.approvals = new ApprovalGate(activities);
    this.turn = new TurnRunner(activities, this.approvals);
    this.turns = turnsCompleted;
  }

  /** The converse Update's validator. */
  validateConverse(args: ConverseUpdateArgs | undefined): void {
    if (typeof args?.runId !== 'string' || !/^[0-9a-f-]{36}$/.test(args.runId))
      throw new Error('runId must be a uuid');
  }

  /**
   * The converse Update's handler: queues the run, waits for its turn, runs
   * it and returns when it has ended. A run it already knows is not run again.
   */
  async converse({ runId }: ConverseUpdateArgs): Promise<ConverseUpdateResult> {
    if (this.queue.knows(runId)) return { runId, position: 0 };
    const position = await this.queue.take(runId, () => {
      this.turns++;
      this.turnsThisRun++;
      return this.turn.run(runId);
    });
    return { runId, position };
  }

  validateApproval(args: ApprovalArgs | undefined): void {
    this.approvals.validate(args);
  }

  approve(args: ApprovalArgs): Promise<ApprovalResult> {
    return this.approvals.decide(args);
  }

  state(): SessionState {
    const current = this.queue.current;
    return {
      status: current ? 'running' : 'idle',
      current_run_id: current,
      current_turn: this.turns,
      current_step: this.turn.step,
      pending_step: this.turn.pending,
      queued_run_ids: this.queue.waiting(),
      awaiting_approval_call_ids: this.approvals.awaiting(),
    };
  }
}
