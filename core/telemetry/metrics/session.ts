import type { Attributes, Counter, Histogram, Meter, ObservableGauge } from '@opentelemetry/api';
import { errorTypeLabel } from './genai.js';

const TURN_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
const TOOL_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

export type ToolKind = 'mcp' | 'sandbox' | 'memory' | 'a2a';

/**
 * Agent turns and their tool calls, recorded by the worker where the outcome
 * is written (so a retried activity that writes nothing counts nothing).
 * Model calls are the GenAI client metrics (genai.ts).
 */
export class SessionMetrics {
  private readonly started: Counter;
  private readonly completed: Counter;
  private readonly failed: Counter;
  private readonly turnDuration: Histogram;
  private readonly toolDuration: Histogram;
  private readonly pendingApprovals: ObservableGauge;
  private readonly attrs = new Map<string, Attributes>();

  constructor(meter: Meter) {
    this.started = meter.createCounter('agent_server.session.turns.started', {
      description: 'Agent turns the worker began (plan pinned on the run, or refused at its start).',
      unit: '{turn}',
    });
    this.completed = meter.createCounter('agent_server.session.turns.completed', {
      description: 'Agent turns that ended with an answer.',
      unit: '{turn}',
    });
    this.failed = meter.createCounter('agent_server.session.turns.failed', {
      description: 'Agent turns that failed, by error.type (the run’s error code).',
      unit: '{turn}',
    });
    this.turnDuration = meter.createHistogram('agent_server.session.turn.duration', {
      description:
        'From the user’s message (the run’s creation) to the turn’s end, approval waits included, by agent_server.turn.status.',
      unit: 's',
      advice: { explicitBucketBoundaries: TURN_BUCKETS },
    });
    this.toolDuration = meter.createHistogram('agent_server.session.tool_call.duration', {
      description:
        'One attempt of a tool call of a turn, by agent_server.tool.kind; error.type when it failed or its result is an error.',
      unit: 's',
      advice: { explicitBucketBoundaries: TOOL_BUCKETS },
    });
    this.pendingApprovals = meter.createObservableGauge('agent_server.session.approvals.pending', {
      description:
        'Tool calls waiting for a person’s approval, over the whole installation (read from PostgreSQL: the same on every worker).',
      unit: '{call}',
    });
  }

  private cached(key: string, make: () => Attributes): Attributes {
    let a = this.attrs.get(key);
    if (!a) {
      a = make();
      if (this.attrs.size < 1_000) this.attrs.set(key, a);
    }
    return a;
  }

  turnStarted(): void {
    this.started.add(1);
  }

  /** A turn's end, recorded where its run was closed; `createdAt`: the run's creation. */
  turnEnded(status: 'completed' | 'failed', createdAt: Date | undefined, errorCode?: string): void {
    if (status === 'completed') this.completed.add(1);
    else {
      const type = errorTypeLabel(errorCode ?? '_OTHER');
      this.failed.add(
        1,
        this.cached(`failed\0${type}`, () => ({ 'error.type': type })),
      );
    }
    if (createdAt) {
      const seconds = Math.max(0, (Date.now() - createdAt.getTime()) / 1000);
      this.turnDuration.record(
        seconds,
        this.cached(`turn\0${status}`, () => ({ 'agent_server.turn.status': status })),
      );
    }
  }

  /** One attempt of a tool call; `errorType` when it threw or its result is an error. */
  toolCall(kind: ToolKind, seconds: number, errorType?: string): void {
    const type = errorType === undefined ? '' : errorTypeLabel(errorType);
    this.toolDuration.record(
      seconds,
      this.cached(`tool\0${kind}\0${type}`, () =>
        type ? { 'agent_server.tool.kind': kind, 'error.type': type } : { 'agent_server.tool.kind': kind },
      ),
    );
  }

  /** Reports `count()` at each collection until the returned function is called; a failed read reports nothing. */
  observePendingApprovals(count: () => Promise<number>): () => void {
    const callback = async (result: { observe(value: number): void }) => {
      try {
        result.observe(await count());
      } catch {
        // The database is away: no value is better than a wrong one.
      }
    };
    this.pendingApprovals.addCallback(callback);
    return () => this.pendingApprovals.removeCallback(callback);
  }
}
