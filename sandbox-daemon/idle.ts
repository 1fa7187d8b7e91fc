/**
 * Idle shutdown: the daemon stops after `timeoutMs` without requests or
 * running commands. Health checks are not activity (a polling orchestrator
 * must not keep an idle sandbox alive); a running command is, even after its
 * caller went away (a retry may attach to it).
 */
export class IdleTracker {
  /** 0 disables idle shutdown; a claimed pool sandbox takes its session's. */
  timeoutMs: number;
  private inflight = 0;
  private readonly running = new Set<() => void>();
  private lastActivity = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    timeoutMs: number,
    private readonly onIdle: (idleMs: number) => void,
  ) {
    this.timeoutMs = timeoutMs;
  }

  /** Requests in flight; an attached waiter is one. */
  get requests(): number {
    return this.inflight;
  }

  /** Requests in flight or commands running, perhaps for a caller that went away. */
  busy(): boolean {
    return this.inflight > 0 || this.running.size > 0;
  }

  idleMs(): number {
    return this.busy() ? 0 : Date.now() - this.lastActivity;
  }

  requestStarted(): void {
    this.inflight++;
    this.lastActivity = Date.now();
  }

  requestEnded(): void {
    this.inflight--;
    this.lastActivity = Date.now();
    this.arm();
  }

  /** Registers a running command's killer (stop() kills it); returns the function to call when it ends. */
  trackProcess(kill: () => void): () => void {
    this.running.add(kill);
    return () => {
      this.running.delete(kill);
      this.lastActivity = Date.now();
      if (!this.stopped) this.arm();
    };
  }

  arm(): void {
    clearTimeout(this.timer);
    if (this.timeoutMs === 0) return;
    const due = this.lastActivity + this.timeoutMs - Date.now();
    this.timer = setTimeout(
      () => {
        if (this.busy()) return; // requestEnded() or the end of the command re-arms
        if (Date.now() - this.lastActivity < this.timeoutMs) return this.arm();
        this.onIdle(Date.now() - this.lastActivity);
      },
      Math.max(due, 10),
    );
  }

  /** Shutdown: no more idle checks from ending commands, and every running command killed. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const kill of this.running) kill();
  }
}
