import { condition } from '@temporalio/workflow';

/** Runs remembered as done in this workflow run, so a re-sent Update is not queued twice. */
const MAX_REMEMBERED = 500;

/**
 * The session's runs, one turn at a time in arrival order. Each converse
 * Update handler waits here for its turn and runs it; a run already queued,
 * running or done in this workflow run is recognised (`knows`), so a re-sent
 * Update does not queue it twice.
 */
export class TurnQueue {
  /** Runs accepted and not yet finished, in arrival order; the first one is running. */
  private readonly queue: string[] = [];
  private readonly done = new Set<string>();
  /** Runs cancelled while they waited: their handlers return without a turn. */
  private readonly dropped = new Set<string>();
  /** The run whose turn is in progress. */
  current: string | null = null;

  knows(runId: string): boolean {
    return this.current === runId || this.queue.includes(runId) || this.done.has(runId);
  }

  /** No run is queued or running. */
  get empty(): boolean {
    return this.queue.length === 0;
  }

  /** Runs waiting behind the current one. */
  waiting(): string[] {
    return this.queue.filter((id) => id !== this.current);
  }

  /**
   * Queues the run, waits until it is first, runs `turn` and forgets the run
   * once the turn has ended, however it ended. Returns how many runs were
   * ahead of it on arrival.
   */
  async take(runId: string, turn: () => Promise<void>): Promise<number> {
    this.queue.push(runId);
    const position = this.queue.length - 1;
    await condition(() => this.queue[0] === runId || this.dropped.has(runId));
    if (this.dropped.delete(runId)) return position;
    this.current = runId;
    try {
      await turn();
    } finally {
      this.current = null;
      this.queue.shift();
      this.remember(runId);
    }
    return position;
  }

  /**
   * A run cancelled before its turn: out of the queue (its handler returns
   * without a turn) and remembered, so a re-sent Update does not run it.
   * Not for the run in progress, which its turn ends.
   */
  drop(runId: string): void {
    if (this.current === runId) return;
    const at = this.queue.indexOf(runId);
    if (at >= 0) {
      this.queue.splice(at, 1);
      this.dropped.add(runId);
    }
    this.remember(runId);
  }

  private remember(runId: string): void {
    this.done.add(runId);
    if (this.done.size > MAX_REMEMBERED) this.done.delete(this.done.values().next().value!);
  }
}
