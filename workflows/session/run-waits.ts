import { condition } from '@temporalio/workflow';
import type {
  BudgetResumeArgs,
  BudgetWake,
  ModelStepResult,
  PauseRunArgs,
  ResumeRunArgs,
  TOOL_DECISION_ACTIONS,
  ToolDecisionArgs,
} from '../session.definitions.js';

/** The local activities (bookkeeping in Postgres) that record a wait's start and end. */
export interface RunWaitActivities {
  pauseRun: (args: PauseRunArgs) => Promise<void>;
  resumeRun: (args: ResumeRunArgs) => Promise<void>;
}

type AwaitingBudget = Extract<ModelStepResult, { kind: 'awaiting_budget' }>;

/** Milliseconds from now until `at` (epoch ms), at least 1: a timer of 0 would mean no timer. */
const until = (at: number) => Math.max(1, at - Date.now());

function earliest(...limits: Array<number | undefined>): number | undefined {
  const set = limits.filter((l): l is number => l !== undefined);
  return set.length ? Math.min(...set) : undefined;
}

/**
 * A turn waiting for budget: woken by the resumeBudget Update (a person, or
 * the API after a raise the call now fits in), by the budget's next period
 * (a durable timer), or ended by the agent's budget_wait_timeout_ms.
 */
export class BudgetWait {
  /** `closed` once the wait has ended (woken or timed out): a late resume is refused. */
  private waiting: { runId: string; by?: BudgetWake; closed?: boolean } | null = null;

  constructor(private readonly local: RunWaitActivities) {}

  /** The resumeBudget Update's validator: only the run waiting here. */
  validate(args: BudgetResumeArgs | undefined): void {
    if (!this.waiting || this.waiting.runId !== args?.runId || this.waiting.closed)
      throw new Error('run is not awaiting budget');
    if (args.by !== 'user' && args.by !== 'budget_raised')
      throw new Error('by must be user or budget_raised');
  }

  /** The resumeBudget Update's handler: returns once the run's resumption is recorded. */
  async resume({ runId, by }: BudgetResumeArgs): Promise<{ runId: string }> {
    const w = this.waiting!;
    w.by ??= by;
    await condition(() => this.waiting !== w);
    return { runId };
  }

  awaiting(runId: string | null): boolean {
    return this.waiting !== null && this.waiting.runId === runId;
  }

  /**
   * Waits until woken or the budget's next period; 'timeout' when
   * `deadline` (epoch ms) came first. The pause and the resumption are
   * recorded under `key`.
   */
  async wait(
    runId: string,
    step: number,
    short: AwaitingBudget,
    deadline: number | null,
    key: string,
  ): Promise<'resumed' | 'timeout'> {
    const w: { runId: string; by?: BudgetWake; closed?: boolean } = { runId };
    this.waiting = w;
    try {
      const details = short.shortfall;
      await this.local.pauseRun({ runId, step, reason: 'budget', details, timeoutAt: deadline, key });
      const reset = short.resetsAt !== null ? until(short.resetsAt) : undefined;
      const limit = earliest(reset, deadline !== null ? until(deadline) : undefined);
      const woken = await condition(() => w.by !== undefined, limit);
      w.closed = true;
      if (!woken && deadline !== null && Date.now() >= deadline) return 'timeout';
      const by = w.by ?? 'period';
      await this.local.resumeRun({ runId, step, reason: 'budget', by, key });
      return 'resumed';
    } finally {
      this.waiting = null;
    }
  }
}

type Decision = { action: (typeof TOOL_DECISION_ACTIONS)[number]; result?: ToolDecisionArgs['result'] };

/**
 * A tool call whose outcome is unknown (a non-idempotent MCP tool whose
 * worker died mid-call) waiting for a person: call it again, or supply its
 * result; the agent's decision_timeout_ms fails the call.
 */
export class DecisionWait {
  /** `closed` once the wait has ended (decided or timed out): a late decision is refused. */
  private waiting: { runId: string; decision?: Decision; closed?: boolean } | null = null;

  constructor(private readonly local: RunWaitActivities) {}

  validate(args: ToolDecisionArgs | undefined): void {
    if (!this.waiting || this.waiting.runId !== args?.runId)
      throw new Error('run is not awaiting a decision');
    if (this.waiting.decision || this.waiting.closed) throw new Error('the call was already decided');
    if (args.action !== 'retry' && args.action !== 'supply')
      throw new Error('action must be retry or supply');
    if (args.action === 'supply' && typeof args.result?.output !== 'string')
      throw new Error('supply needs result.output');
  }

  /** The decideToolCall Update's handler: returns once the decision is recorded. */
  async decide({ runId, action, result }: ToolDecisionArgs): Promise<{ runId: string }> {
    const w = this.waiting!;
    w.decision = { action, ...(result ? { result } : {}) };
    await condition(() => this.waiting !== w);
    return { runId };
  }

  awaiting(runId: string | null): boolean {
    return this.waiting !== null && this.waiting.runId === runId;
  }

  /** Waits for the decision; undefined when `timeoutMs` passed first. */
  async wait(
    runId: string,
    step: number,
    details: Record<string, unknown>,
    timeoutMs: number | null,
    key: string,
  ): Promise<Decision | undefined> {
    const w: { runId: string; decision?: Decision; closed?: boolean } = { runId };
    this.waiting = w;
    try {
      const timeoutAt = timeoutMs !== null ? Date.now() + timeoutMs : null;
      await this.local.pauseRun({ runId, step, reason: 'decision', details, timeoutAt, key });
      await condition(() => w.decision !== undefined, timeoutMs ?? undefined);
      w.closed = true;
      const decision = w.decision;
      const by = decision ? 'user' : 'timeout';
      const said = { call_id: details.call_id, action: decision?.action ?? 'fail' };
      await this.local.resumeRun({ runId, step, reason: 'decision', by, key, details: said });
      return decision;
    } finally {
      this.waiting = null;
    }
  }
}

/**
 * A run waiting for someone outside the session: an MCP server's
 * authorization (woken by the API once the OAuth flow completes) or a
 * person's answer to a server's question. The answer arrives as an Update;
 * the agent's timeout ends the wait without one.
 */
export class AnswerWait<A> {
  /** `closed` once the wait has ended (answered or timed out): a late answer is refused. */
  private waiting: { runId: string; answer?: A; closed?: boolean } | null = null;

  constructor(
    private readonly local: RunWaitActivities,
    private readonly reason: 'authorization' | 'input',
  ) {}

  validate(args: { runId?: string } | undefined): void {
    if (!this.waiting || this.waiting.runId !== args?.runId || this.waiting.closed)
      throw new Error(`run is not awaiting ${this.reason}`);
    if (this.waiting.answer !== undefined) throw new Error(`the run's ${this.reason} was already given`);
  }

  /** The Update's handler: returns once the run's resumption is recorded. */
  async answer(runId: string, answer: A): Promise<{ runId: string }> {
    const w = this.waiting!;
    w.answer = answer;
    await condition(() => this.waiting !== w);
    return { runId };
  }

  awaiting(runId: string | null): boolean {
    return this.waiting !== null && this.waiting.runId === runId;
  }

  /** Waits for the answer; undefined when `timeoutMs` passed first. `said` goes into `run.resumed`. */
  async wait(
    runId: string,
    step: number,
    details: Record<string, unknown>,
    timeoutMs: number,
    key: string,
    said: (answer: A | undefined) => Record<string, unknown> = () => ({}),
  ): Promise<A | undefined> {
    const w: { runId: string; answer?: A; closed?: boolean } = { runId };
    this.waiting = w;
    const reason = this.reason;
    try {
      await this.local.pauseRun({ runId, step, reason, details, timeoutAt: Date.now() + timeoutMs, key });
      await condition(() => w.answer !== undefined, timeoutMs);
      w.closed = true;
      const by = w.answer !== undefined ? 'user' : 'timeout';
      await this.local.resumeRun({ runId, step, reason, by, key, details: said(w.answer) });
      return w.answer;
    } finally {
      this.waiting = null;
    }
  }
}
