import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import type { Page } from '../schemas/common.schemas.js';
import type { ConversationFilter, Message } from '../schemas/conversations.schemas.js';

export const ConversationsTableName = 'conversations';
export const ThreadsTableName = 'threads';
export const MessagesTableName = 'messages';

export interface DbConversation {
  /** Our key; `id` is the client's string, unique within the project. */
  pk: string;
  project_id: string;
  id: string;
  namespace: string;
  context: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}
export interface DbThread {
  id: string;
  conversation_pk: string;
  agent_id: string | null;
  /** Input tokens the provider reported on the thread's last model call. */
  last_input_tokens: number | null;
  created_at: Date;
  updated_at: Date;
}
/** A thread with the conversation it belongs to. */
export interface DbThreadInConversation extends DbThread {
  conversation_id: string;
  project_id: string;
}
export interface DbMessage {
  id: string;
  seq: number;
  thread_id: string;
  role: Message['role'];
  content: unknown;
  tool_calls: unknown;
  tool_call_id: string | null;
  usage: unknown;
  /** The run (converse turn) that wrote it, and which step of that run. */
  run_id: string | null;
  step_key: string | null;
  prompt_version_id: string | null;
  trace_id: string | null;
  hidden: boolean;
  /** jsonb: small facts such as a tool result's name and error flag. */
  metadata: unknown;
  created_at: Date;
}

declare module 'knex/types/tables.js' {
  interface Tables {
    conversations: DbConversation;
    threads: DbThread;
    messages: DbMessage;
  }
}

/** Knex only. */
export class ConversationsRepository {
  constructor(readonly db: Db) {}

  async insert(
    row: Pick<DbConversation, 'project_id' | 'id' | 'namespace' | 'context'>,
  ): Promise<DbConversation> {
    const [created] = await this.db(ConversationsTableName)
      // jsonb takes JSON text; pg would send a bare object in an array-literal shape otherwise.
      .insert({ ...row, context: JSON.stringify(row.context) as unknown as Record<string, unknown> })
      .returning('*');
    return created!;
  }

  async list(projectId: string, filter: ConversationFilter, page: Page): Promise<DbConversation[]> {
    const q = this.db(ConversationsTableName).where({ project_id: projectId });
    if (filter.namespace !== undefined) q.andWhere({ namespace: filter.namespace });
    if (filter.agent_id !== undefined) {
      const agentId = filter.agent_id;
      q.whereExists((sub) =>
        sub
          .select(this.db.raw('1'))
          .from(ThreadsTableName)
          .whereRaw('threads.conversation_pk = conversations.pk')
          .andWhere('threads.agent_id', agentId),
      );
    }
    return q
      .select('*')
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'pk', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset);
  }

  /** Up to two conversations with that id (enough to tell unique from ambiguous across projects). */
  async findById(id: string, projectId: string | undefined): Promise<DbConversation[]> {
    const q = this.db(ConversationsTableName).where({ id });
    if (projectId !== undefined) q.andWhere({ project_id: projectId });
    return q.select('*').orderBy('created_at').limit(2);
  }

  async update(
    pk: string,
    patch: Partial<Pick<DbConversation, 'namespace' | 'context'>>,
  ): Promise<DbConversation | undefined> {
    const row: Record<string, unknown> = { ...patch, updated_at: this.db.fn.now() };
    if (patch.context !== undefined) row.context = JSON.stringify(patch.context);
    const [updated] = await this.db(ConversationsTableName)
      .where({ pk })
      .update(row as Partial<DbConversation>)
      .returning('*');
    return updated;
  }

  /** Messages, threads and the conversation go together or not at all. */
  async deleteWithHistory(pk: string): Promise<boolean> {
    return this.db.transaction(async (trx: Knex.Transaction) => {
      const threadIds = trx(ThreadsTableName).where({ conversation_pk: pk }).select('id');
      await trx(MessagesTableName).whereIn('thread_id', threadIds).delete();
      await trx(ThreadsTableName).where({ conversation_pk: pk }).delete();
      return (await trx(ConversationsTableName).where({ pk }).delete()) > 0;
    });
  }

  /** The conversation's agent threads (one per session), the most recently active first. */
  listSessionThreads(pk: string): Promise<Array<{ id: string; agent_id: string }>> {
    return this.db(ThreadsTableName)
      .where({ conversation_pk: pk })
      .whereNotNull('agent_id')
      .orderBy('updated_at', 'desc')
      .select<Array<{ id: string; agent_id: string }>>('id', 'agent_id');
  }

  async listThreads(pk: string, page: Page): Promise<DbThread[]> {
    return this.db(ThreadsTableName)
      .where({ conversation_pk: pk })
      .select('*')
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset);
  }

  async findThread(id: string): Promise<DbThreadInConversation | undefined> {
    return this.db({ t: ThreadsTableName })
      .join({ c: ConversationsTableName }, 'c.pk', 't.conversation_pk')
      .where('t.id', id)
      .first<DbThreadInConversation | undefined>('t.*', 'c.id as conversation_id', 'c.project_id');
  }

  /** The ordering key of a message in a thread, or undefined when it is not there. */
  async messageSeq(threadId: string, messageId: string): Promise<number | undefined> {
    const row = await this.db(MessagesTableName).where({ thread_id: threadId, id: messageId }).first('seq');
    return row?.seq;
  }

  /** Oldest first, by insertion order; `afterSeq` is exclusive. */
  async listMessages(threadId: string, afterSeq: number | undefined, limit: number): Promise<DbMessage[]> {
    const q = this.db(MessagesTableName).where({ thread_id: threadId });
    if (afterSeq !== undefined) q.andWhere('seq', '>', afterSeq);
    return q.select('*').orderBy('seq', 'asc').limit(limit);
  }
}
