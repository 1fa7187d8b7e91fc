import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import {
  ConflictError,
  NotFoundError,
  ServiceUnavailableError,
  ValidationError,
  isUniqueViolation,
} from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { DbConversation, DbMessage, DbThread } from '../../core/db/tables/index.js';
import type {
  ConversationListRow,
  ConversationsRepository,
} from '../../core/repositories/conversations.repository.js';
import { costUsd, defaultPrice } from '../../core/metering/pricing.js';
import type { Page } from '../schemas/common.schemas.js';
import type {
  Conversation,
  ConversationCreateBody,
  ConversationListItem,
  ConversationFilter,
  ConversationUpdateBody,
  Message,
  MessagePage,
  Thread,
  ThreadSummary,
} from '../schemas/conversations.schemas.js';
import { sessionWorkflowId } from '../../workflows/session.definitions.js';
import { CronsRepository } from '../../core/repositories/crons.repository.js';
import { deleteCronSchedules } from './cron-schedules.js';
import {
  awaitDeletionUpdate,
  DELETE_CONVERSATION_WORKFLOW_TYPE,
  deleteConversationWorkflowId,
  type DeleteConversationInput,
} from '../../workflows/conversation-delete.definitions.js';
import { pickUnique } from './name-lookup.js';
import { requireProject } from './project-scope.js';

function toConversation(row: DbConversation): Conversation {
  return {
    id: row.id,
    project_id: row.project_id,
    namespace: row.namespace,
    context: row.context,
    budget: row.budget,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/**
 * What the conversation's runs cost, as each run's view counts it: the cost
 * recorded with it, else its tokens at its model's price. Null when no run
 * has a known cost.
 */
function conversationCost(row: ConversationListRow): number | null {
  let known = row.recorded_cost_usd !== null;
  let usd = Number(row.recorded_cost_usd ?? 0);
  for (const u of row.unrecorded ?? []) {
    const price = u.pricing ?? (u.model ? defaultPrice(u.model) : undefined);
    if (!price) continue;
    known = true;
    usd += costUsd(price, u);
  }
  return known ? Math.round(usd * 1e8) / 1e8 : null;
}

function toListItem(row: ConversationListRow): ConversationListItem {
  return {
    ...toConversation(row),
    last_run: row.last_run_id
      ? {
          run_id: row.last_run_id,
          agent_id: row.last_agent_id,
          agent_name: row.last_agent_name,
          status: row.last_status!,
          created_at: row.last_run_at!.toISOString(),
        }
      : null,
    run_count: row.run_count ?? 0,
    cost_usd: conversationCost(row),
  };
}

export interface ConversationWithSessions extends Conversation {
  workflow_id: string | null;
  temporal_ui_url: string | null;
  sessions: Array<{ agent_id: string; thread_id: string; workflow_id: string; temporal_ui_url: string }>;
}

function toThread(row: DbThread, conversationId: string): Thread {
  return {
    id: row.id,
    conversation_id: conversationId,
    agent_id: row.agent_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Optional parts are left out rather than null, as the vendors' message shapes do. */
function toMessage(row: DbMessage): Message {
  const message: Message = {
    id: row.id,
    thread_id: row.thread_id,
    role: row.role,
    content: row.content,
    created_at: row.created_at.toISOString(),
  };
  if (row.tool_calls != null) message.tool_calls = row.tool_calls;
  if (row.tool_call_id != null) message.tool_call_id = row.tool_call_id;
  if (row.usage != null) message.usage = row.usage;
  return message;
}

export interface DeletionWorkflows {
  client: Client;
  taskQueue: string;
  /** How long a DELETE waits for the worker before answering 503. */
  waitMs: number;
  logger?: Logger;
}

/**
 * Conversations, addressed by the client's string id, with the threads and
 * messages the converse flow writes (read-only here).
 */
export class ConversationsService {
  constructor(
    private readonly conversations: ConversationsRepository,
    /** Builds an operator's Temporal UI link for a session workflow id. */
    private readonly uiUrl: (workflowId: string) => string = () => '',
    /** Where deletions of conversations with sessions run (the workers' task queue). */
    private readonly workflows?: DeletionWorkflows,
  ) {}

  async create(projectId: string, body: ConversationCreateBody): Promise<Conversation> {
    await requireProject(this.conversations.db, projectId);
    try {
      return toConversation(
        await this.conversations.insert({
          project_id: projectId,
          id: body.id ?? randomUUID(),
          namespace: body.namespace ?? 'default',
          context: body.context ?? {},
          budget: body.budget ?? null,
        }),
      );
    } catch (err) {
      if (isUniqueViolation(err))
        throw new ConflictError({
          field: 'id',
          reason: 'a conversation with this id already exists in the project',
        });
      throw err;
    }
  }

  async list(projectId: string, filter: ConversationFilter, page: Page): Promise<ConversationListItem[]> {
    await requireProject(this.conversations.db, projectId);
    return (await this.conversations.list(projectId, filter, page)).map(toListItem);
  }

  /**
   * With the conversation's sessions (one per agent that took part): the most
   * recently active one's `workflow_id` and Temporal UI link at the top level.
   */
  async get(id: string, projectId: string | undefined): Promise<ConversationWithSessions> {
    const row = await this.resolve(id, projectId);
    const threads = await this.conversations.listSessionThreads(row.pk);
    const sessions = threads.map((t) => {
      const workflowId = sessionWorkflowId(t.agent_id, row.id);
      return {
        agent_id: t.agent_id,
        thread_id: t.id,
        workflow_id: workflowId,
        temporal_ui_url: this.uiUrl(workflowId),
      };
    });
    return {
      ...toConversation(row),
      workflow_id: sessions[0]?.workflow_id ?? null,
      temporal_ui_url: sessions[0]?.temporal_ui_url ?? null,
      sessions,
    };
  }

  /** `context`, when given, replaces the stored one: variables are a set, not a document to merge into. */
  async update(
    id: string,
    projectId: string | undefined,
    body: ConversationUpdateBody,
  ): Promise<Conversation> {
    const found = await this.resolve(id, projectId);
    const row = await this.conversations.update(found.pk, body);
    if (!row) throw new NotFoundError('conversation');
    return toConversation(row);
  }

  /**
   * Deletes the conversation with everything recorded of it. One that never
   * had a session goes at once; otherwise a worker does it (a durable
   * workflow: sessions stopped, sandboxes and workspaces removed, then the
   * rows and spans), and this waits until the rows are gone. A 503 means it
   * is under way but not finished: a repeated DELETE waits for the same one.
   * The conversations its runs' sub-agent calls ran in (and theirs) go with
   * it, in the same way and the same transaction.
   */
  async delete(id: string, projectId: string | undefined): Promise<void> {
    const found = await this.resolve(id, projectId);
    // Its crons' rows go with it; their schedules are deleted once it is gone.
    const crons = new CronsRepository(this.conversations.db);
    const tree = [found, ...(await this.conversations.subAgentConversationsBelow(found.pk))];
    const cronIds = (await Promise.all(tree.map((c) => crons.idsOf({ conversationPk: c.pk })))).flat();
    await this.deleteRows(found);
    if (cronIds.length && this.workflows)
      await deleteCronSchedules(this.workflows.client, cronIds, this.workflows.logger);
  }

  private async deleteRows(found: DbConversation): Promise<void> {
    // With the sub-agent conversations below it: they are deleted with it.
    const sessions = await this.conversations.treeSessionsOf(found);
    if (sessions.length === 0) {
      if (!(await this.conversations.deleteWithData(found)).deleted) throw new NotFoundError('conversation');
      return;
    }
    if (!this.workflows) throw new ServiceUnavailableError({ temporal: 'no Temporal client' });
    const { client, taskQueue, waitMs, logger } = this.workflows;
    const input: DeleteConversationInput = {
      projectId: found.project_id,
      conversationPk: found.pk,
      conversationId: found.id,
      sessions,
    };
    try {
      await client.withDeadline(Date.now() + waitMs, () =>
        client.workflow.executeUpdateWithStart(awaitDeletionUpdate, {
          startWorkflowOperation: new WithStartWorkflowOperation(DELETE_CONVERSATION_WORKFLOW_TYPE, {
            workflowId: deleteConversationWorkflowId(found.pk),
            taskQueue,
            args: [input],
            workflowIdConflictPolicy: 'USE_EXISTING',
          }),
        }),
      );
    } catch (err) {
      logger?.error({ err, conversationPk: found.pk }, 'conversation delete did not finish');
      throw new ServiceUnavailableError({
        deletion:
          'the deletion did not finish in time (it goes on if it was accepted); repeat the DELETE to wait for it',
      });
    }
  }

  async listThreads(id: string, projectId: string | undefined, page: Page): Promise<Thread[]> {
    const conversation = await this.resolve(id, projectId);
    return (await this.conversations.listThreads(conversation.pk, page)).map((t) =>
      toThread(t, conversation.id),
    );
  }

  /** Oldest first. `after` must be a message of this thread: a cursor from elsewhere is the caller's mistake. */
  async listMessages(threadId: string, page: MessagePage): Promise<Message[]> {
    const thread = await this.conversations.findThread(threadId);
    if (!thread || (page.project_id !== undefined && thread.project_id !== page.project_id))
      throw new NotFoundError('thread');
    let afterSeq: number | undefined;
    if (page.after !== undefined) {
      afterSeq = await this.conversations.messageSeq(thread.id, page.after);
      if (afterSeq === undefined)
        throw ValidationError.field('after', 'after does not name a message of this thread', 'any.reference');
    }
    return (await this.conversations.listMessages(thread.id, afterSeq, page.limit)).map(toMessage);
  }

  /** Summaries of a thread's earlier messages, oldest first. */
  async listSummaries(threadId: string, projectId: string | undefined): Promise<ThreadSummary[]> {
    const thread = await this.conversations.findThread(threadId);
    if (!thread || (projectId !== undefined && thread.project_id !== projectId))
      throw new NotFoundError('thread');
    return (await this.conversations.listSummaries(thread.id)).map((s) => ({
      id: s.id,
      thread_id: s.thread_id,
      run_id: s.run_id,
      through_message_id: s.through_message_id,
      content: s.content,
      usage: s.usage,
      created_at: s.created_at.toISOString(),
    }));
  }

  private async resolve(id: string, projectId: string | undefined): Promise<DbConversation> {
    if (projectId !== undefined) await requireProject(this.conversations.db, projectId);
    return pickUnique(await this.conversations.findById(id, projectId), 'conversation');
  }
}
