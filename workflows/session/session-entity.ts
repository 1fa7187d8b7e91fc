import { condition, patched } from '@temporalio/workflow';
import {
  CANCEL_ACTIONS,
  type ApprovalArgs,
  type ApprovalResult,
  type BudgetResumeArgs,
  type BudgetResumeResult,
  type ToolDecisionArgs,
  type ToolDecisionResult,
  type CancelRunArgs,
  type CancelRunResult,
  type ConverseUpdateArgs,
  type ConverseUpdateResult,
  type SessionState,
  type AuthorizationResumeArgs,
  type InputAnswer,
  type InputAnswerArgs,
} from '../session.definitions.js';
import { ApprovalGate, type ApprovalActivities } from './approval-gate.js';
import { AnswerWait, BudgetWait, DecisionWait, type RunWaitActivities } from './run-waits.js';
import { TurnQueue } from './turn-queue.js';
import { TurnRunner, type TurnActivities } from './turn-runner.js';

export type SessionActivityStubs = TurnActivities & ApprovalActivities & RunWaitActivities;

/** Marks sessions that cancelled a run (a cancelled activity, `cancelTurn`); see `patched`. */
const RUN_CANCEL_PATCH = 'run-cancel';

const UUID = /^[0-9a-f-]{36}$/;

/**
 * One agent session's state and message handling, without Temporal's wiring
 * (session.workflow.ts registers these methods as its handlers). It holds ids
 * and counters only; transcripts are in Postgres.
 */
export class SessionEntity {
  readonly queue = new TurnQueue();
  private readonly approvals: ApprovalGate;
  private readonly budget: BudgetWait;
  private readonly decision: DecisionWait;
  private readonly authorization: AnswerWait<true>;
  private readonly input: AnswerWait<InputAnswer>;
  private readonly turn: TurnRunner;
  /** Turns over the session's life, earlier workflow runs included. */
  turns: number;
  /** Turns in this workflow run, which decide when to continue as new. */
  turnsThisRun = 0;

  constructor(
    private readonly activities: SessionActivityStubs,
    turnsCompleted: number,
  ) {
    this.approvals = new ApprovalGate(activities);
    this.budget = new BudgetWait(activities);
    this.decision = new DecisionWait(activities);
    this.authorization = new AnswerWait<true>(activities, 'authorization');
    this.input = new AnswerWait<InputAnswer>(activities, 'input');
    this.turn = new TurnRunner(activities, this.approvals, {
      budget: this.budget,
      decision: this.decision,
      authorization: this.authorization,
      input: this.input,
    });
    this.turns = turnsCompleted;
  }

  /** The converse Update's validator. */
  validateConverse(args: ConverseUpdateArgs | undefined): void {
    if (typeof args?.runId !== 'string' || !UUID.test(args.runId)) throw new Error('runId must be a uuid');
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

  validateBudgetResume(args: BudgetResumeArgs | undefined): void {
    this.budget.validate(args);
  }

  resumeBudget(args: BudgetResumeArgs): Promise<BudgetResumeResult> {
    return this.budget.resume(args);
  }

  validateToolDecision(args: ToolDecisionArgs | undefined): void {
    this.decision.validate(args);
  }

  decideToolCall(args: ToolDecisionArgs): Promise<ToolDecisionResult> {
    return this.decision.decide(args);
  }

  validateAuthorizationResume(args: AuthorizationResumeArgs | undefined): void {
    this.authorization.validate(args);
  }

  resumeAuthorization({ runId }: AuthorizationResumeArgs): Promise<{ runId: string }> {
    return this.authorization.answer(runId, true);
  }

  validateInputAnswer(args: InputAnswerArgs | undefined): void {
    this.input.validate(args);
    if (!['accept', 'decline', 'cancel'].includes(args!.action))
      throw new Error('action must be accept, decline or cancel');
  }

  answerInput({ runId, action, content }: InputAnswerArgs): Promise<{ runId: string }> {
    return this.input.answer(runId, { action, ...(content ? { content } : {}) });
  }

  /** The cancelRun Update's validator. */
  validateCancel(args: CancelRunArgs | undefined): void {
    if (typeof args?.runId !== 'string' || !UUID.test(args.runId)) throw new Error('runId must be a uuid');
    if (!(CANCEL_ACTIONS as readonly string[]).includes(args.action))
      throw new Error(`action must be one of ${CANCEL_ACTIONS.join(', ')}`);
  }

  /**
   * The cancelRun Update's handler: returns once the run has ended. The turn
   * in progress is stopped where it is (its activity cancelled) and ends
   * itself; a run waiting in the queue, or one this workflow run does not
   * know (not delivered yet), is closed here and never runs.
   */
  async cancelRun({ runId, action }: CancelRunArgs): Promise<CancelRunResult> {
    // Only sessions that cancel take these paths; every history before them replays as it ran.
    if (patched(RUN_CANCEL_PATCH)) {
      if (this.turn.cancel(runId, action)) await condition(() => this.queue.current !== runId);
      else {
        this.queue.drop(runId);
        await this.activities.cancelTurn({ runId, action });
      }
    }
    return { runId };
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
