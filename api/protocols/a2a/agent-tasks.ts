import {
  Role,
  type AgentCard,
  type CancelTaskRequest,
  type DeleteTaskPushNotificationConfigRequest,
  type GetTaskPushNotificationConfigRequest,
  type GetTaskRequest,
  type ListTaskPushNotificationConfigsRequest,
  type ListTaskPushNotificationConfigsResponse,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type Task,
  type TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import {
  ExtendedAgentCardNotConfiguredError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import type { Logger } from '../../../core/logger.js';
import { isTerminal, type DbRun } from '../../../core/db/tables/index.js';
import { ConflictError, ValidationError } from '../../../core/errors.js';
import type { A2aAgentRow } from '../../../core/repositories/a2a-tasks.repository.js';
import { toRunView, type RunView } from '../../../core/runs/run-view.js';
import { conversationId as conversationIdSchema } from '../../schemas/conversations.schemas.js';
import { messageId as messageIdSchema } from '../../schemas/converse.schemas.js';
import { answerWait } from './answers.js';
import { toA2aError } from './errors.js';
import { converseContent } from './parts.js';
import { pushConfigOf, pushConfigRow } from './push-configs.js';
import type { A2aServices } from './services.js';
import { STREAM_END, TaskStream } from './task-stream.js';
import { runStatuses, toTask, type TaskOptions } from '../../../core/a2a/task-view.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DEFAULT_PAGE = 50;
const MAX_PAGE = 100;

/** What one request brings beside its parameters. */
export interface CallScope {
  /** Aborted when the client leaves: a stream stops following its run. */
  signal: AbortSignal;
  traceId: string | undefined;
  log: Logger;
}

/** Where a task's stream starts: its run, and the events after this one. */
interface Started {
  runId: string;
  afterSeq: number;
  /** The run's user message, when the request just gave it (a new run, or the same message again). */
  content?: unknown;
  /**
   * The message changed nothing (a wait for an authorization still to be
   * given, or one that already ended): the task is answered as it stands,
   * and followed from now on like SubscribeToTask.
   */
  asItStands?: true;
}

function check(schema: { validate(v: unknown): { error?: Error } }, value: string, field: string): void {
  const { error } = schema.validate(value);
  if (error) throw ValidationError.field(field, `${field}: ${error.message}`);
}

/**
 * One agent as an A2A agent: tasks are its runs, contexts its conversations.
 * Each method translates to the services converse uses (ConverseService,
 * RunWaitsService, RunCancelService, the run event log); errors leave as A2A
 * errors, never with internals.
 */
export class AgentTasks implements A2ARequestHandler {
  constructor(
    private readonly services: A2aServices,
    private readonly agent: A2aAgentRow,
    private readonly card: AgentCard,
    private readonly scope: CallScope,
  ) {}

  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw toA2aError(err, this.scope.log);
    }
  }

  getAgentCard(): Promise<AgentCard> {
    return Promise.resolve(this.card);
  }

  getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    return Promise.reject(new ExtendedAgentCardNotConfiguredError());
  }

  sendMessage(params: SendMessageRequest): Promise<Task> {
    return this.guard(async () => {
      const started = await this.start(params);
      // As it stands: a task that waits or has ended is answered at once.
      if (!params.configuration?.returnImmediately)
        await this.services.converse.wait(
          started.runId,
          this.services.deps.config.session.converseWaitTimeoutMs,
          started.asItStands ? undefined : started.afterSeq || undefined,
        );
      return this.task(
        started.runId,
        { historyLength: params.configuration?.historyLength },
        started.content,
      );
    });
  }

  async *sendMessageStream(params: SendMessageRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const started = await this.guard(() => this.start(params));
    yield* this.follow(started, !started.asItStands);
  }

  getTask(params: GetTaskRequest): Promise<Task> {
    return this.guard(async () => {
      const run = await this.run(params.id);
      return this.task(run.id, { historyLength: params.historyLength });
    });
  }

  cancelTask(params: CancelTaskRequest): Promise<Task> {
    return this.guard(async () => {
      const run = await this.run(params.id);
      try {
        await this.services.cancels.cancel(run.id, run.project_id, 'interrupt');
      } catch (err) {
        if (err instanceof ConflictError)
          throw new TaskNotCancelableError({
            message: typeof err.details.reason === 'string' ? err.details.reason : undefined,
          });
        throw err;
      }
      return this.task(run.id);
    });
  }

  /** SubscribeToTask: the task as it is, then its run's events from now on (the run's log is the stream's truth). */
  async *resubscribe(params: SubscribeToTaskRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const run = await this.guard(() => this.run(params.id));
    if (isTerminal(run.status))
      throw new UnsupportedOperationError({
        message: `the task has ended (${run.status}): read it with GetTask`,
      });
    yield* this.follow({ runId: run.id, afterSeq: run.last_event_seq }, false);
  }

  listTasks(params: ListTasksRequest): Promise<ListTasksResponse> {
    return this.guard(() => this.list(params));
  }

  /** Sets a push config on the task: its updates (when it ends or waits) are POSTed to the URL. */
  createTaskPushNotificationConfig(params: TaskPushNotificationConfig): Promise<TaskPushNotificationConfig> {
    return this.guard(async () => {
      const run = await this.run(params.taskId);
      const box = this.services.deps.secrets;
      return pushConfigOf(box, await this.services.pushes.upsert(pushConfigRow(box, params, run)));
    });
  }

  getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
  ): Promise<TaskPushNotificationConfig> {
    return this.guard(async () => {
      const run = await this.run(params.taskId);
      const row = await this.services.pushes.find(run.id, params.id);
      if (!row)
        throw ValidationError.field('id', `id: no push config "${params.id}" on the task`, 'any.invalid');
      return pushConfigOf(this.services.deps.secrets, row);
    });
  }

  listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.guard(async () => {
      const run = await this.run(params.taskId);
      const { pageSize, offset } = this.page(params.pageSize || DEFAULT_PAGE, params.pageToken);
      const rows = await this.services.pushes.list(run.id, pageSize + 1, offset);
      const configs = rows.slice(0, pageSize).map((r) => pushConfigOf(this.services.deps.secrets, r));
      return { configs, nextPageToken: rows.length > pageSize ? String(offset + pageSize) : '' };
    });
  }

  /** Deletes the config: its deliveries not yet made are dropped with it. */
  deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest): Promise<void> {
    return this.guard(async () => {
      const run = await this.run(params.taskId);
      if (!(await this.services.pushes.delete(run.id, params.id)))
        throw ValidationError.field('id', `id: no push config "${params.id}" on the task`, 'any.invalid');
    });
  }

  /** A page's size and offset (the token a previous page answered), checked. */
  private page(pageSize: number, pageToken: string | undefined): { pageSize: number; offset: number } {
    if (pageSize < 1 || pageSize > MAX_PAGE)
      throw ValidationError.field('pageSize', `pageSize must be between 1 and ${MAX_PAGE}`, 'number.range');
    const offset = pageToken ? Number(pageToken) : 0;
    if (!Number.isInteger(offset) || offset < 0)
      throw ValidationError.field(
        'pageToken',
        'pageToken must be one a previous list answered',
        'any.invalid',
      );
    return { pageSize, offset };
  }

  /** A task of this agent (a run it answered), or TaskNotFound. */
  private async run(taskId: string): Promise<DbRun> {
    if (!UUID.test(taskId)) throw new TaskNotFoundError();
    const run = await this.services.runs.findById(taskId);
    if (!run || run.agent_id !== this.agent.id || run.project_id !== this.agent.project_id)
      throw new TaskNotFoundError();
    return run;
  }

  private async view(runId: string): Promise<RunView> {
    const row = await this.services.runs.findView(runId);
    if (!row) throw new TaskNotFoundError();
    return toRunView(row, this.services.deps.config);
  }

  /** The run as a task; its user message read unless the request just gave it. */
  private async task(runId: string, opts: TaskOptions = {}, content?: unknown): Promise<Task> {
    if (content !== undefined) return toTask(await this.view(runId), content, opts);
    const [view, users] = await Promise.all([this.view(runId), this.services.tasks.userMessages([runId])]);
    return toTask(view, users.get(runId), opts);
  }

  /**
   * A client message: on a task that waits, its answer (the same run goes
   * on); without a task, a new run in its context (a new conversation when
   * it names none). The message id is the run's idempotency key: the same
   * message again is the same task.
   */
  private async start(params: SendMessageRequest): Promise<Started> {
    const message = params.message;
    if (!message) throw ValidationError.field('message', 'message is required', 'any.required');
    if (message.role !== Role.ROLE_USER)
      throw ValidationError.field('message.role', 'message.role must be ROLE_USER', 'any.only');
    const push = params.configuration?.taskPushNotificationConfig;
    return message.taskId ? this.answer(message, push) : this.submit(message, push);
  }

  /**
   * The push config given with the message, stored for its task before the
   * task's run starts (`hold`), so its first event finds it.
   */
  private async submit(message: Message, push: TaskPushNotificationConfig | undefined): Promise<Started> {
    const content = converseContent(message.parts);
    if (message.messageId) check(messageIdSchema, message.messageId, 'message.messageId');
    if (message.contextId) check(conversationIdSchema, message.contextId, 'message.contextId');
    const prefix = 'configuration.taskPushNotificationConfig.';
    // Checked before the run exists: a bad config must not leave a task that never starts.
    if (push) pushConfigRow(this.services.deps.secrets, push, { id: '', project_id: '' }, prefix);
    const accepted = await this.services.converse.submit(
      this.agent.project_id,
      {
        agent_id: this.agent.id,
        message: content,
        ...(message.contextId ? { conversation_id: message.contextId } : {}),
        ...(message.messageId ? { message_id: message.messageId } : {}),
      },
      this.scope.traceId,
      { source: 'a2a', ...(push ? { hold: true } : {}) },
    );
    const { run } = accepted;
    if (push) {
      await this.storePush(push, run);
      if (!isTerminal(run.status)) await this.services.converse.deliver(accepted);
    }
    return { runId: run.id, afterSeq: 0, content };
  }

  private async storePush(push: TaskPushNotificationConfig, run: { id: string; project_id: string }) {
    const box = this.services.deps.secrets;
    await this.services.pushes.upsert(
      pushConfigRow(box, push, run, 'configuration.taskPushNotificationConfig.'),
    );
  }

  /**
   * A message on a task: the answer to its wait. A task whose wait for
   * authorization has ended (our OAuth callback woke it) takes the message
   * that says "authorized" as that answer, already given: it is answered as
   * it goes on, not refused, as long as it has not ended.
   */
  private async answer(message: Message, push?: TaskPushNotificationConfig): Promise<Started> {
    const run = await this.run(message.taskId);
    const view = await this.view(run.id);
    if (message.contextId && message.contextId !== view.conversation_id)
      throw ValidationError.field(
        'message.contextId',
        "message.contextId is not the task's context",
        'any.only',
      );
    const waiting = run.status.startsWith('awaiting_');
    const authorized = !waiting && (await this.services.tasks.endedWait(run.id)) === 'authorization';
    if (isTerminal(run.status))
      throw new UnsupportedOperationError({
        message: authorized
          ? `the task went on once authorized and has ended (${run.status}): read it with GetTask`
          : `the task has ended (${run.status}): send the next message without taskId, in its contextId`,
      });
    if (!waiting && !authorized)
      throw new UnsupportedOperationError({
        message: 'the task is working and waits for nothing: follow it with SubscribeToTask',
      });
    if (push) await this.storePush(push, run);
    if (authorized || !(await answerWait(this.services, run, message)))
      return { runId: run.id, afterSeq: run.last_event_seq, asItStands: true };
    return { runId: run.id, afterSeq: run.last_event_seq };
  }

  /**
   * The task, then its run's events as stream responses until the run ends
   * or waits. `fresh`: the caller just started (or answered) the run, so a
   * wait seen in the first view may be the one just answered.
   */
  private async *follow(started: Started, fresh: boolean): AsyncGenerator<StreamResponse, void, undefined> {
    const row = await this.guard(async () => {
      const found = await this.services.runs.findView(started.runId);
      if (!found) throw new TaskNotFoundError();
      return found;
    });
    const first = toTask(
      toRunView(row, this.services.deps.config),
      (await this.services.tasks.userMessages([row.id])).get(row.id),
    );
    yield { payload: { $case: 'task', value: first } };
    if (isTerminal(row.status) || (!fresh && row.status.startsWith('awaiting_'))) return;
    const stream = new TaskStream(first, () => this.view(started.runId));
    const after = fresh ? started.afterSeq : row.last_event_seq;
    try {
      for await (const ev of this.services.converse.events(started.runId, after, this.scope.signal)) {
        for (const out of await stream.render(ev)) yield out;
        if (STREAM_END.has(ev.type)) return;
      }
    } catch (err) {
      if (this.scope.signal.aborted) return;
      throw toA2aError(err, this.scope.log);
    }
  }

  private async list(params: ListTasksRequest): Promise<ListTasksResponse> {
    const { pageSize, offset } = this.page(params.pageSize ?? DEFAULT_PAGE, params.pageToken);
    const after = params.statusTimestampAfter ? new Date(params.statusTimestampAfter) : undefined;
    if (after && Number.isNaN(after.getTime()))
      throw ValidationError.field(
        'statusTimestampAfter',
        'statusTimestampAfter must be an ISO 8601 timestamp',
        'date.base',
      );
    const { projectId, agentId } = { projectId: this.agent.project_id, agentId: this.agent.id };
    let conversationPk: string | undefined;
    if (params.contextId) {
      const [conversation] = await this.services.conversations.findById(params.contextId, projectId);
      if (!conversation) return { tasks: [], nextPageToken: '', pageSize, totalSize: 0 };
      conversationPk = conversation.pk;
    }
    const statuses = runStatuses(params.status);
    const filter = {
      projectId,
      agentId,
      ...(conversationPk ? { conversationPk } : {}),
      ...(statuses ? { statuses } : {}),
      ...(after ? { statusAfter: after } : {}),
    };
    if (statuses && !statuses.length) return { tasks: [], nextPageToken: '', pageSize, totalSize: 0 };
    const [rows, total] = await Promise.all([
      this.services.runs.listViews(filter, { limit: pageSize, offset }),
      this.services.tasks.count(filter),
    ]);
    const users = await this.services.tasks.userMessages(rows.map((r) => r.id));
    const opts = { historyLength: params.historyLength, includeArtifacts: params.includeArtifacts ?? false };
    const tasks = rows.map((r) => toTask(toRunView(r, this.services.deps.config), users.get(r.id), opts));
    const next = offset + rows.length;
    return { tasks, nextPageToken: next < total ? String(next) : '', pageSize, totalSize: total };
  }
}
