import { createHash } from 'node:crypto';
import type { DbRun } from '../../../core/db/tables/index.js';
import type { ProtocolThreadsRepository } from '../../../core/repositories/protocol-threads.repository.js';
import { type ThreadRow } from '../../../core/repositories/protocol-threads.repository.js';
import { lcMessages, parseArgs, type LcMessage } from './messages.js';

/** An interrupt as the protocol shows it: LangChain's human-in-the-loop shape for an approval. */
export interface Interrupt {
  id: string;
  value: unknown;
}

/** The graph node a waiting run stands before: tools wait for approval or a decision, the model for budget. */
const nodeOf = (run: DbRun): string => (run.status === 'awaiting_budget' ? 'agent' : 'tools');

/**
 * What a paused run waits for, as an interrupt. An approval reads as
 * LangChain's human-in-the-loop middleware makes it (`actionRequests`,
 * `reviewConfigs`), resumed with `{decisions: [{type: approve | reject}]}`;
 * a budget, decision, authorization or input pause names its reason and
 * details (an authorization's URL, an input's question and schema).
 */
export function interruptsOf(run: DbRun): Interrupt[] {
  if (run.status === 'awaiting_approval') {
    const pending = run.pending_approvals ?? [];
    return [
      {
        id: run.id,
        value: {
          actionRequests: pending.map((p) => ({
            name: p.name,
            args: parseArgs(p.arguments),
            description: `Tool execution pending approval: ${String(p.name)}`,
            id: p.id,
          })),
          reviewConfigs: pending.map((p) => ({
            actionName: p.name,
            allowedDecisions: ['approve', 'reject'],
          })),
        },
      },
    ];
  }
  if (run.status.startsWith('awaiting_'))
    return [
      {
        id: run.id,
        value: {
          reason: run.pause?.reason ?? run.status.replace('awaiting_', ''),
          since: run.pause?.since ?? null,
          timeout_at: run.pause?.timeout_at ?? null,
          details: run.pause?.details ?? {},
        },
      },
    ];
  return [];
}

/** A past state of a thread (the protocol's ThreadState). */
export interface ThreadState {
  values: { messages: LcMessage[] };
  next: string[];
  tasks: unknown[];
  checkpoint: {
    thread_id: string;
    checkpoint_ns: string;
    checkpoint_id: string | null;
    checkpoint_map: null;
  };
  parent_checkpoint: ThreadState['checkpoint'] | null;
  metadata: Record<string, unknown>;
  created_at: string | null;
}

/** A checkpoint id: a UUID-shaped name for "the thread after message `seq`". */
export function checkpointId(conversationPk: string, seq: number): string {
  const h = createHash('sha1').update(`${conversationPk}:${seq}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const iso = (d: Date | string | null | undefined): string | null => (d ? new Date(d).toISOString() : null);

/**
 * A conversation as the protocol's thread: its transcript as `values.messages`,
 * its status from its runs, the interrupts of the run waiting, if any.
 */
export class ThreadViews {
  constructor(private readonly repo: ProtocolThreadsRepository) {}

  async values(thread: Pick<ThreadRow, 'pk'>): Promise<{ messages: LcMessage[] } & Record<string, unknown>> {
    return { messages: lcMessages(await this.repo.transcript(thread.pk)) };
  }

  async waiting(thread: ThreadRow): Promise<DbRun | undefined> {
    if (thread.status !== 'interrupted' && thread.status !== 'busy') return undefined;
    return (await this.repo.unfinished(thread.pk))[0];
  }

  async thread(thread: ThreadRow, withValues = true): Promise<Record<string, unknown>> {
    const run = thread.status === 'interrupted' ? await this.waiting(thread) : undefined;
    return {
      thread_id: thread.id,
      created_at: iso(thread.created_at),
      updated_at: iso(thread.updated_at),
      state_updated_at: iso(thread.updated_at),
      metadata: thread.metadata ?? {},
      status: thread.status,
      values: withValues ? await this.values(thread) : {},
      interrupts: run ? { [run.id]: interruptsOf(run) } : {},
      config: {},
      error: null,
    };
  }

  /** The thread's state now: `next` and `tasks` name what a running or waiting run does next. */
  async state(thread: ThreadRow): Promise<Record<string, unknown>> {
    const rows = await this.repo.transcript(thread.pk);
    const run = await this.waiting(thread);
    const last = rows.at(-1);
    const prev = rows.at(-2);
    const interrupts = run ? interruptsOf(run) : [];
    const node = run ? (interrupts.length ? nodeOf(run) : 'agent') : undefined;
    return {
      values: { messages: lcMessages(rows) },
      next: node ? [node] : [],
      tasks: run
        ? [{ id: run.id, name: node, error: null, interrupts, checkpoint: null, state: null, result: null }]
        : [],
      checkpoint: this.checkpoint(thread, last?.seq),
      parent_checkpoint: prev ? this.checkpoint(thread, prev.seq) : null,
      metadata: { source: 'loop', step: rows.length, run_id: last?.run_id ?? null, thread_id: thread.id },
      created_at: iso(last?.created_at ?? thread.created_at),
      interrupts,
    };
  }

  /**
   * Past states, newest first: two per turn, after its input and after its
   * answer (every stored message of the run; its last one is the answer).
   */
  async history(thread: ThreadRow, limit: number, before?: string): Promise<ThreadState[]> {
    const rows = await this.repo.transcript(thread.pk);
    const cuts: number[] = [];
    rows.forEach((m, i) => {
      const next = rows[i + 1];
      // After the user's message, and after the last message of each run.
      if (m.role === 'user' || !next || next.run_id !== m.run_id) cuts.push(i);
    });
    const states = [...new Set(cuts)].reverse().map((i, k, all) => {
      const upTo = rows.slice(0, i + 1);
      const parent = all[k + 1];
      return {
        values: { messages: lcMessages(upTo) },
        next: rows[i]!.role === 'user' ? ['agent'] : [],
        tasks: [],
        checkpoint: this.checkpoint(thread, rows[i]!.seq),
        parent_checkpoint: parent !== undefined ? this.checkpoint(thread, rows[parent]!.seq) : null,
        metadata: { source: 'loop', step: i + 1, run_id: rows[i]!.run_id, thread_id: thread.id },
        created_at: iso(rows[i]!.created_at),
      };
    });
    let start = 0;
    if (before) {
      const at = states.findIndex((s) => s.checkpoint.checkpoint_id === before);
      start = at < 0 ? states.length : at + 1;
    }
    return states.slice(start, start + limit);
  }

  private checkpoint(thread: ThreadRow, seq: number | undefined) {
    return {
      thread_id: thread.id,
      checkpoint_ns: '',
      checkpoint_id: seq === undefined ? null : checkpointId(thread.pk, seq),
      checkpoint_map: null,
    };
  }
}
