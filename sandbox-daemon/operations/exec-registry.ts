/**
 * Executions by caller-chosen id, so that a retried request never runs a
 * command twice. The manager's activity sends `<runId>:<step>:<toolCallId>`;
 * when the worker dies mid-command and Temporal retries the activity, the
 * retry's request finds the execution here: still running (it waits for the
 * same result) or finished (it gets the kept result). Nothing is persisted:
 * a recreated sandbox starts with an empty registry, which is how a caller
 * using `attach_only` learns that its command was interrupted.
 *
 * Bounds: finished results are kept for `retentionMs` after they finish, at
 * most `maxEntries` of them and `maxBytes` of output (the oldest go first; the
 * newest is always kept). Running executions are never dropped. Each result is
 * already capped by SANDBOX_MAX_OUTPUT_BYTES per stream.
 */
import { createHash } from 'node:crypto';
import type { CommandResult } from '../contracts.js';
import { ExecutionConflictError, UnknownExecutionError } from '../errors.js';

export interface ExecRegistryLimits {
  retentionMs: number;
  maxEntries: number;
  maxBytes: number;
}

interface Entry {
  fingerprint: string;
  /** Settles when the execution ends; rejects when it could not start (the entry is dropped then). */
  done: Promise<CommandResult>;
  /** Set when the execution finished with a result. */
  finishedAt?: number;
  bytes: number;
}

/** What makes two requests "the same execution": kind, source, workdir, env (the timeout may differ). */
export function execFingerprint(
  kind: 'bash' | 'python',
  source: string,
  workdir: string | undefined,
  env: Record<string, string>,
): string {
  const sortedEnv = Object.entries(env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256')
    .update(JSON.stringify([kind, source, workdir ?? null, sortedEnv]))
    .digest('hex');
}

export class ExecRegistry {
  /** Running entries in start order and finished ones in finish order (a finished entry is moved to the end). */
  private readonly entries = new Map<string, Entry>();
  private finishedCount = 0;
  private finishedBytes = 0;

  constructor(
    private readonly limits: ExecRegistryLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Executions started and not yet finished. */
  get running(): number {
    return this.entries.size - this.finishedCount;
  }

  /**
   * Runs `start` under `id` unless the id is known: then answers with that
   * execution's result (waiting for it while it runs) and `reused: true`.
   * `attachOnly` never starts anything and throws UnknownExecutionError for
   * an unknown id; a known id with another fingerprint throws ExecutionConflictError.
   * The check and the registration happen in one synchronous step, so two
   * concurrent requests with one id start one process.
   */
  async run(
    id: string,
    fingerprint: string,
    attachOnly: boolean,
    start: () => Promise<CommandResult>,
  ): Promise<{ result: CommandResult; reused: boolean }> {
    this.sweep();
    const existing = this.entries.get(id);
    if (existing) {
      if (existing.fingerprint !== fingerprint) throw new ExecutionConflictError(id);
      return { result: await existing.done, reused: true };
    }
    if (attachOnly) throw new UnknownExecutionError(id);
    const entry: Entry = { fingerprint, done: start(), bytes: 0 };
    this.entries.set(id, entry);
    entry.done.then(
      (result) => this.finish(id, entry, result),
      () => {
        // Nothing ran (bad workdir, could not spawn): forget the id so a corrected retry may run.
        if (this.entries.get(id) === entry) this.entries.delete(id);
      },
    );
    return { result: await entry.done, reused: false };
  }

  private finish(id: string, entry: Entry, result: CommandResult): void {
    if (this.entries.get(id) !== entry) return;
    entry.finishedAt = this.now();
    entry.bytes = Buffer.byteLength(result.stdout) + Buffer.byteLength(result.stderr);
    this.entries.delete(id);
    this.entries.set(id, entry);
    this.finishedCount++;
    this.finishedBytes += entry.bytes;
    this.sweep();
  }

  /** Drops expired results, then the oldest while over the entry or byte bound (never the newest). */
  private sweep(): void {
    const expiredBefore = this.now() - this.limits.retentionMs;
    for (const [id, entry] of this.entries) {
      if (entry.finishedAt === undefined) continue;
      const over =
        this.finishedCount > this.limits.maxEntries ||
        (this.finishedBytes > this.limits.maxBytes && this.finishedCount > 1);
      if (entry.finishedAt > expiredBefore && !over) break; // finished entries are in finish order
      this.entries.delete(id);
      this.finishedCount--;
      this.finishedBytes -= entry.bytes;
    }
  }
}
