/**
 * Removes what idle shutdown leaves behind. Daemons stop themselves when idle;
 * the reaper then (1) destroys sandboxes — compute and workspace — of
 * conversations that no longer exist, and (2) removes the compute of sandboxes
 * stopped, or running but idle, for longer than SANDBOX_REAP_IDLE_MS, keeping
 * the workspace for the conversation's next turn, then (3) lets the backend do
 * its own housekeeping (docker: replace dead pool sandboxes). Safe to run from several
 * replicas at once: every step tolerates the object being gone already.
 */
import type { SandboxLogger } from './base-sandbox-manager.js';
import type { SandboxInfo, SandboxManager, SandboxSession } from './sandbox-manager.js';

export interface ReaperOptions {
  manager: SandboxManager;
  /** False when the conversation was deleted; its sandbox and workspace go. */
  isConversationLive(session: SandboxSession): Promise<boolean>;
  idleMs: number;
  logger: SandboxLogger;
  now?: () => number;
}

export interface ReapReport {
  destroyed: string[];
  released: string[];
}

export class SandboxReaper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ReapReport> | undefined;
  /** Running sandboxes the last pass listed (undefined before the first): the running-sandboxes gauge. */
  lastRunning: number | undefined;

  constructor(private readonly options: ReaperOptions) {}

  private idleTooLong(info: SandboxInfo, now: number): boolean {
    if (info.state === 'stopped')
      return info.finishedAt !== undefined && now - info.finishedAt.getTime() > this.options.idleMs;
    if (info.state === 'running') return info.idleMs !== undefined && info.idleMs > this.options.idleMs;
    return false;
  }

  async runOnce(): Promise<ReapReport> {
    const { manager, logger } = this.options;
    const now = (this.options.now ?? Date.now)();
    const report: ReapReport = { destroyed: [], released: [] };
    const infos = await manager.list();
    this.lastRunning = infos.filter((i) => i.state === 'running').length;
    for (const info of infos) {
      try {
        if (!(await this.options.isConversationLive(info.session))) {
          await manager.destroy(info.session);
          report.destroyed.push(info.name);
        } else if (this.idleTooLong(info, now)) {
          await manager.release(info.session);
          report.released.push(info.name);
        }
      } catch (err) {
        logger.warn(
          { sandbox: info.name, err: (err as Error).message },
          'reaper could not clean up a sandbox',
        );
      }
    }
    try {
      await manager.maintain?.();
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'sandbox housekeeping failed');
    }
    if (report.destroyed.length + report.released.length > 0) logger.info(report, 'sandbox reaper pass');
    return report;
  }

  start(intervalMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      // One pass at a time: a slow Docker engine must not pile passes up.
      this.running ??= this.runOnce()
        .catch((err: unknown) => {
          this.options.logger.error({ err: (err as Error).message }, 'sandbox reaper pass failed');
          return { destroyed: [], released: [] };
        })
        .finally(() => (this.running = undefined));
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
