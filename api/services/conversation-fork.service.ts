import { randomUUID } from 'node:crypto';
import {
  ConflictError,
  NotFoundError,
  ServiceUnavailableError,
  ValidationError,
  isUniqueViolation,
} from '../../core/errors.js';
import type { DbConversation, DbThread } from '../../core/db/tables/index.js';
import type {
  ConversationForkRepository,
  ForkPlan,
} from '../../core/repositories/conversation-fork.repository.js';
import type { ConversationsRepository } from '../../core/repositories/conversations.repository.js';
import type { ConversationForkBody } from '../schemas/conversations.schemas.js';
import { copyForkWorkspace, type WorkspaceCopies } from './fork-workspace.js';
import { pickUnique } from './name-lookup.js';
import { requireProject } from './project-scope.js';

type ThreadRef = Pick<DbThread, 'id' | 'agent_id'>;

/**
 * Forks a conversation: a new conversation holding one thread's transcript up
 * to a message and, when that thread's agent has a sandbox, a copy of its
 * session's workspace (docs/interface.md#forking-a-conversation). The fork is
 * an ordinary conversation; its first turn starts a session of its own.
 */
export class ConversationForkService {
  constructor(
    private readonly repo: ConversationForkRepository,
    private readonly conversations: ConversationsRepository,
    /** Where workspaces are copied (the workers' task queue); without it, sandbox agents' conversations cannot be forked (503). */
    private readonly workspaces?: WorkspaceCopies,
  ) {}

  /** Answers the new conversation's row; the original is only read. */
  async fork(id: string, projectId: string | undefined, body: ConversationForkBody): Promise<DbConversation> {
    if (projectId !== undefined) await requireProject(this.conversations.db, projectId);
    const source = pickUnique(await this.conversations.findById(id, projectId), 'conversation');
    const { thread, throughSeq } = await this.cut(source, body);
    const plan: ForkPlan = { source, id: body.conversation_id ?? randomUUID(), thread, throughSeq };
    const created = await this.insert(plan);
    const agentId = thread?.agent_id;
    if (agentId && (await this.repo.agentHasSandbox(agentId))) {
      // The rows come first: the fork's id is taken (a 409 above never copies into another conversation's workspace).
      try {
        if (!this.workspaces) throw new ServiceUnavailableError({ temporal: 'no Temporal client' });
        await copyForkWorkspace(this.workspaces, created.pk, {
          projectId: source.project_id,
          agentId,
          fromConversationId: source.id,
          toConversationId: created.id,
        });
      } catch (err) {
        // No fork without its workspace: a repeated request starts again from nothing.
        await this.conversations.deleteWithData(created);
        throw err;
      }
    }
    return created;
  }

  private async insert(plan: ForkPlan): Promise<DbConversation> {
    try {
      return await this.repo.fork(plan);
    } catch (err) {
      if (isUniqueViolation(err))
        throw new ConflictError({
          field: 'conversation_id',
          reason: 'a conversation with this id already exists in the project',
        });
      throw err;
    }
  }

  /** Which thread is copied, and through which message. */
  private async cut(
    source: DbConversation,
    body: ConversationForkBody,
  ): Promise<{ thread?: ThreadRef; throughSeq?: number }> {
    if (body.at_message_id === undefined) return { thread: await this.pickThread(source, body.agent_id) };
    const message = await this.repo.findMessage(source.project_id, body.at_message_id);
    if (!message) throw new NotFoundError('message');
    if (message.conversation_pk !== source.pk)
      throw ValidationError.field(
        'at_message_id',
        'at_message_id names a message of another conversation',
        'any.reference',
      );
    if (body.agent_id !== undefined && body.agent_id !== message.agent_id)
      throw ValidationError.field(
        'agent_id',
        "agent_id is not the agent of at_message_id's thread",
        'any.reference',
      );
    return { thread: { id: message.thread_id, agent_id: message.agent_id }, throughSeq: message.seq };
  }

  /** The agent's thread; without `agent_id`, the only one (400 naming the candidates when there are several). */
  private async pickThread(
    source: DbConversation,
    agentId: string | undefined,
  ): Promise<ThreadRef | undefined> {
    const threads = await this.repo.threads(source.pk);
    if (agentId !== undefined) {
      const thread = threads.find((t) => t.agent_id === agentId);
      if (!thread)
        throw ValidationError.field(
          'agent_id',
          'the conversation has no thread of this agent',
          'any.reference',
        );
      return thread;
    }
    if (threads.length <= 1) return threads[0];
    const candidates = threads.map((t) => t.agent_id ?? 'a deleted agent').join(', ');
    throw ValidationError.field(
      'agent_id',
      `several agents spoke in this conversation; pass agent_id to choose one of: ${candidates}`,
      'any.ambiguous',
    );
  }
}
