import { condition } from '@temporalio/workflow';
import type { ApprovalArgs, ApprovalDecision, ApprovalResult, ToolCallPlan } from '../session.definitions.js';

/** What a person is asked to decide on: the current run's calls that wait for approval. */
interface Paused {
  runId: string;
  step: number;
  calls: ToolCallPlan[];
  decisions: Map<string, ApprovalDecision>;
  /** Approval handlers still writing their decisions to Postgres. */
  recording: number;
}

/** The local activities (bookkeeping in Postgres) a pause and its decisions use. */
export interface ApprovalActivities {
  pauseForApproval: (args: { runId: string; step: number; callIds: string[] }) => Promise<void>;
  recordApprovals: (args: {
    runId: string;
    step: number;
    decisions: ApprovalDecision[];
    remaining: string[];
  }) => Promise<void>;
}

/**
 * The pause of a turn on tool calls that need a person's approval: the turn
 * waits in `pause`, the approve Update is checked by `validate` and served by
 * `decide`, and the state Query reads `awaiting`.
 */
export class ApprovalGate {
  private paused: Paused | null = null;
  /** Approval handlers still writing their decisions, whatever pause they belong to. */
  private writing = 0;

  constructor(private readonly local: ApprovalActivities) {}

  /** No decision is being written: a cancelled turn's outcome may be stored after them. */
  settled(): boolean {
    return this.writing === 0;
  }

  /** Tool calls of the current run waiting for a person's decision. */
  awaiting(): string[] {
    const p = this.paused;
    return p ? p.calls.filter((c) => !p.decisions.has(c.id)).map((c) => c.id) : [];
  }

  /**
   * Pauses the turn until every call in `asking` is decided, or until
   * `timeoutMs` declines the undecided ones; returns the decisions by call id.
   */
  async pause(
    runId: string,
    step: number,
    asking: ToolCallPlan[],
    timeoutMs: number | null,
  ): Promise<Map<string, ApprovalDecision>> {
    const p: Paused = { runId, step, calls: asking, decisions: new Map(), recording: 0 };
    this.paused = p;
    try {
      await this.local.pauseForApproval({ runId, step, callIds: asking.map((c) => c.id) });
      const allDecided = () => asking.every((c) => p.decisions.has(c.id));
      const inTime = await condition(allDecided, timeoutMs ?? undefined);
      if (!inTime) {
        const late = asking
          .filter((c) => !p.decisions.has(c.id))
          .map((c) => ({ id: c.id, decision: 'rejected' as const, by: 'timeout' as const }));
        for (const d of late) p.decisions.set(d.id, d);
        await this.local.recordApprovals({ runId, step, decisions: late, remaining: [] });
      }
      // The turn goes on once the decisions' writes are done (they run in the Update handlers).
      await condition(() => p.recording === 0);
    } finally {
      this.paused = null;
    }
    return p.decisions;
  }

  /**
   * The approve Update's validator: refuses (and nothing is recorded) unless
   * the run is paused on exactly those undecided calls.
   */
  validate(args: ApprovalArgs | undefined): void {
    const p = this.paused;
    if (!p || p.runId !== args?.runId) throw new Error('run is not awaiting approval');
    const ids = [...(args.approved_call_ids ?? []), ...(args.rejected_call_ids ?? [])];
    if (ids.length === 0) throw new Error('no call ids given');
    if (new Set(ids).size !== ids.length) throw new Error('a call id is given twice');
    for (const id of ids) {
      if (!p.calls.some((c) => c.id === id)) throw new Error(`call ${id} is not awaiting approval`);
      if (p.decisions.has(id)) throw new Error(`call ${id} was already decided`);
    }
  }

  /**
   * The approve Update's handler: records the decisions in Postgres before it
   * returns, so the API answers with what is stored.
   */
  async decide({ runId, approved_call_ids, rejected_call_ids }: ApprovalArgs): Promise<ApprovalResult> {
    const p = this.paused!;
    const decided: ApprovalDecision[] = [
      ...approved_call_ids.map((id) => ({ id, decision: 'approved' as const, by: 'user' as const })),
      ...rejected_call_ids.map((id) => ({ id, decision: 'rejected' as const, by: 'user' as const })),
    ];
    for (const d of decided) p.decisions.set(d.id, d);
    const remaining = p.calls.filter((c) => !p.decisions.has(c.id)).map((c) => c.id);
    p.recording++;
    this.writing++;
    try {
      await this.local.recordApprovals({ runId, step: p.step, decisions: decided, remaining });
    } finally {
      p.recording--;
      this.writing--;
    }
    return { status: remaining.length ? 'awaiting_approval' : 'running', pending_call_ids: remaining };
  }
}
