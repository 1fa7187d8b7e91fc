import { randomUUID } from 'node:crypto';
import { type DbRun, type RunProtocolRequest, type RunStatus } from '../../../core/db/tables/index.js';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/errors.js';
import type { ThreadRow } from '../../../core/repositories/protocol-threads.repository.js';
import type { AppDeps } from '../../deps.js';
import { requireProject } from './door.js';
import { ProtocolError } from './errors.js';
import { converseContent, isHuman } from './messages.js';
import { resumeRun } from './resume.js';
import type { RunCreateBody, StreamMode } from './runs.schemas.js';
import type { DoorServices } from './services.js';
import { interruptsOf } from './threads.js';

/** Where a stateless run's throwaway conversation lives (kept for the record, out of thread searches). */
export const STATELESS_NAMESPACE = 'stateless';

const MESSAGE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Our run statuses in the protocol's words: any wait for someone is an interrupt. */
export function protocolStatus(status: RunStatus): string {
  switch (status) {
    case 'queued':
      return 'pending';
    case 'running':
      return 'running';
    case 'completed':
      return 'success';
    case 'failed':
      return 'error';
    default:
      return 'interrupted';
  }
}

/** The protocol's status filter as ours. */
export function ourStatuses(status: string | undefined): RunStatus[] | undefined {
  switch (status) {
    case undefined:
      return undefined;
    case 'pending':
      return ['queued'];
    case 'running':
      return ['running'];
    case 'success':
      return ['completed'];
    case 'error':
      return ['failed'];
    case 'interrupted':
      return [
        'cancelled',
        'awaiting_approval',
        'awaiting_budget',
        'awaiting_decision',
        'awaiting_authorization',
        'awaiting_input',
      ];
    default:
      return [];
  }
}

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

/** A run as the protocol shows it. */
export function runView(run: DbRun, threadId: string): Record<string, unknown> {
  const p = run.protocol;
  return {
    run_id: run.id,
    thread_id: threadId,
    assistant_id: p?.assistant_id ?? run.agent_id,
    created_at: iso(run.created_at),
    updated_at: iso(run.finished_at ?? run.started_at ?? run.created_at),
    status: protocolStatus(run.status),
    metadata: p?.metadata ?? {},
    multitask_strategy: p?.multitask_strategy ?? null,
    kwargs: p?.kwargs ?? {},
  };
}

export function streamModes(mode: StreamMode | StreamMode[] | undefined): StreamMode[] {
  const modes = Array.isArray(mode) ? mode : mode ? [mode] : [];
  return modes.length ? [...new Set(modes)] : ['values'];
}

/** What a run create answers: the run, its thread, and from which event its stream starts. */
export interface Started {
  run: DbRun;
  thread: ThreadRow;
  /** Events after this one are the run's part the caller asked for (0: all; a resumed run: after its pause). */
  afterSeq: number;
  webhookSecret?: string;
}

/**
 * The protocol's runs over converse: a run's input is one user message of a
 * converse turn on the thread's conversation, with the assistant's agent; a
 * resume decides the waiting run; the multitask strategies act on the
 * conversation's unfinished runs before the message is stored.
 */
export class ProtocolRuns {
  constructor(
    private readonly deps: AppDeps,
    private readonly door: DoorServices,
    /** Delivers a stored run later (`after_seconds`), durably. */
    private readonly later?: (runId: string, seconds: number) => Promise<void>,
  ) {}

  /** An assistant id: an agent's id, or an agent's name, in the project (one query). */
  async agentOf(projectId: string, assistantId: string): Promise<{ id: string; name: string }> {
    const found = await this.door.repo.findAgent(projectId, assistantId);
    if (!found) throw new NotFoundError('assistant');
    return found;
  }

  /**
   * Both read at once (each is a query in sequence otherwise); an unknown
   * assistant is reported before an unknown thread, and a stateless run's
   * thread is made only for a known assistant.
   */
  private async assistantAndThread(projectId: string, threadId: string | undefined, body: RunCreateBody) {
    if (threadId === undefined || body.if_not_exists === 'create') {
      const agent = await this.agentOf(projectId, body.assistant_id);
      return { agent, thread: await this.thread(projectId, threadId, body) };
    }
    const [agent, thread] = await Promise.allSettled([
      this.agentOf(projectId, body.assistant_id),
      this.thread(projectId, threadId, body),
    ]);
    if (agent.status === 'rejected') throw agent.reason;
    if (thread.status === 'rejected') throw thread.reason;
    return { agent: agent.value, thread: thread.value };
  }

  async thread(projectId: string, threadId: string | undefined, body: RunCreateBody): Promise<ThreadRow> {
    const { repo } = this.door;
    if (threadId === undefined) {
      const id = randomUUID();
      const created = await repo.insert({
        project_id: projectId,
        id,
        metadata: {},
        namespace: STATELESS_NAMESPACE,
      });
      return { ...created, status: 'idle' };
    }
    const found = await repo.find(projectId, threadId);
    if (found) return found;
    await requireProject(this.deps.db, projectId);
    if (body.if_not_exists !== 'create') throw new NotFoundError('thread');
    try {
      await repo.insert({ project_id: projectId, id: threadId, metadata: {} });
    } catch {
      // Created meanwhile by a concurrent run: use it.
    }
    return (await repo.find(projectId, threadId))!;
  }

  async create(
    projectId: string,
    threadId: string | undefined,
    body: RunCreateBody,
    traceId?: string,
  ): Promise<Started> {
    const { agent, thread } = await this.assistantAndThread(projectId, threadId, body);
    if (body.command?.resume !== undefined) {
      const run = await resumeRun(this.door, projectId, thread, body.command.resume);
      return { run, thread, afterSeq: run.last_event_seq };
    }
    const message = this.inputMessage(body);
    const strategy = body.multitask_strategy ?? 'reject';
    await this.makeRoom(projectId, thread, strategy);
    const protocol: RunProtocolRequest = {
      assistant_id: body.assistant_id,
      metadata: body.metadata ?? {},
      multitask_strategy: strategy,
      stream_mode: streamModes(body.stream_mode),
      ...(threadId === undefined ? { stateless: true } : {}),
      kwargs: {
        ...(body.config ? { config: body.config } : {}),
        ...(body.context ? { context: body.context } : {}),
        ...(body.on_disconnect ? { on_disconnect: body.on_disconnect } : {}),
        ...(body.after_seconds ? { after_seconds: body.after_seconds } : {}),
        ...(body.stream_resumable ? { resumable: true } : {}),
      },
    };
    const hold = Boolean(body.after_seconds && body.after_seconds > 0);
    if (hold && !this.later)
      throw ValidationError.field(
        'after_seconds',
        'after_seconds is not available on this server',
        'any.invalid',
      );
    const accepted = await this.door.converse.submit(
      projectId,
      {
        agent_id: agent.id,
        conversation_id: thread.id,
        message: message.content,
        ...(message.id ? { message_id: message.id } : {}),
        ...(body.context ? { context: body.context } : {}),
        ...(body.webhook ? { webhook: body.webhook } : {}),
      },
      traceId,
      { door: 'langgraph', protocol, hold },
    );
    if (hold && accepted.run.status === 'queued') await this.later!(accepted.run.id, body.after_seconds!);
    return { run: accepted.run, thread, afterSeq: 0, webhookSecret: accepted.webhookSecret };
  }

  /** The input's user messages as one converse message (their texts and images, in order). */
  private inputMessage(body: RunCreateBody): {
    content: string | Array<Record<string, unknown>>;
    id?: string;
  } {
    const messages = body.input?.messages ?? [];
    if (!messages.length)
      throw ValidationError.field(
        'input.messages',
        'input.messages must hold the user message (or send command.resume to answer an interrupt)',
        'any.required',
      );
    const foreign = messages.findIndex((m) => !isHuman(m));
    if (foreign >= 0)
      throw ValidationError.field(
        `input.messages.${foreign}`,
        `input.messages.${foreign} must be a human (or role "user") message: the agent writes the rest`,
        'any.only',
      );
    const parts = messages.map((m) => converseContent(m.content));
    const content =
      parts.length === 1
        ? parts[0]!
        : parts.flatMap((p) => (typeof p === 'string' ? [{ type: 'text', text: p }] : p));
    if ((typeof content === 'string' && content === '') || (Array.isArray(content) && !content.length))
      throw ValidationError.field('input.messages.0.content', 'the message is empty', 'string.empty');
    const id = messages.at(-1)?.id ?? undefined;
    return { content, ...(id && MESSAGE_ID.test(id) ? { id } : {}) };
  }

  /**
   * The multitask strategy, before anything is stored: `reject` refuses
   * while the thread has a run not yet ended (422, no run left behind);
   * `interrupt` and `rollback` cancel those runs that way; `enqueue` lets the
   * new run wait its turn in the session.
   */
  private async makeRoom(projectId: string, thread: ThreadRow, strategy: string): Promise<void> {
    // The thread's status, just read, already says whether a run is unfinished.
    if (strategy === 'enqueue' || thread.status === 'idle' || thread.status === 'error') return;
    const unfinished = await this.door.repo.unfinished(thread.pk);
    if (!unfinished.length) return;
    if (strategy === 'reject')
      throw new ProtocolError(
        422,
        'Thread is already running a task. Wait for it to finish or choose a different multitask strategy.',
      );
    for (const run of unfinished)
      try {
        await this.door.cancels.cancel(run.id, projectId, strategy as 'interrupt' | 'rollback');
      } catch (err) {
        // Ended meanwhile: nothing to cancel.
        if (!(err instanceof ConflictError)) throw err;
      }
  }

  /** A run of the thread the protocol shows (a rolled-back or deleted one is gone). */
  async find(projectId: string, threadId: string | undefined, runId: string) {
    const run = await this.door.repo.findRun(projectId, runId);
    if (
      !run ||
      run.rolled_back ||
      run.protocol?.forgotten ||
      (threadId !== undefined && run.conversation_id !== threadId)
    )
      throw new NotFoundError('run');
    return run;
  }

  /** Waits for the run to end or pause (at most the converse wait), then the thread's values. */
  async join(projectId: string, threadId: string | undefined, runId: string) {
    const run = await this.find(projectId, threadId, runId);
    await this.door.converse.wait(run.id, this.deps.config.session.converseWaitTimeoutMs);
    return this.result(projectId, run.conversation_pk, runId);
  }

  /** A run just started (or resumed): waits for it to end or pause, then the thread's values. */
  async waitFor(projectId: string, started: Started) {
    const timeout = this.deps.config.session.converseWaitTimeoutMs;
    await this.door.converse.wait(started.run.id, timeout, started.afterSeq || undefined);
    return this.result(projectId, started.thread.pk, started.run.id);
  }

  /** The thread's values once a run stopped: with `__interrupt__` while it waits, `__error__` when it failed. */
  async result(projectId: string, conversationPk: string, runId: string): Promise<Record<string, unknown>> {
    const [run, values] = await Promise.all([
      this.door.repo.findRun(projectId, runId),
      this.door.views.values({ pk: conversationPk }),
    ]);
    if (!run) return values;
    if (run.status.startsWith('awaiting_')) values.__interrupt__ = interruptsOf(run);
    if (run.status === 'failed')
      values.__error__ = {
        error: run.error?.code ?? 'error',
        message: run.error?.message ?? 'the run failed',
      };
    return values;
  }
}
