import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import {
  AgentsTableName,
  ConversationsTableName,
  MessagesTableName,
  ThreadSummariesTableName,
  ThreadsTableName,
  type DbAgent,
  type DbConversation,
  type DbConversationInsert,
  type DbMessage,
  type DbMessageInsert,
  type DbThread,
  type DbThreadSummary,
  type DbThreadSummaryInsert,
} from '../db/tables/index.js';

/** A message of a project's conversation, with the thread and conversation it belongs to. */
export interface MessagePlace {
  id: string;
  seq: number;
  thread_id: string;
  agent_id: string | null;
  conversation_pk: string;
}

export interface ForkPlan {
  source: Pick<DbConversation, 'project_id' | 'namespace' | 'context'>;
  /** The new conversation's client id. */
  id: string;
  /** The thread copied; none when the conversation has no thread yet. */
  thread?: Pick<DbThread, 'id' | 'agent_id'>;
  /** The last message copied (inclusive); the whole thread when absent. */
  throughSeq?: number;
}

type Trx = Knex.Transaction;

/** jsonb columns are written as JSON text (see core/db/tables/columns.ts). */
function json(value: unknown): string | null {
  return value == null ? null : JSON.stringify(value);
}

/**
 * A copy of a message: same content, new id and seq, no run and no trace.
 * The run and its trace belong to the original conversation (deleting the
 * fork deletes the traces its messages name); a message without a run is
 * history that comes before any of the fork's own turns.
 */
function copyOf(m: DbMessage, threadId: string): DbMessageInsert & { id: string; created_at: Date } {
  return {
    id: randomUUID(),
    thread_id: threadId,
    role: m.role,
    content: JSON.stringify(m.content),
    tool_calls: json(m.tool_calls),
    tool_call_id: m.tool_call_id,
    usage: json(m.usage),
    run_id: null,
    step_key: m.step_key,
    prompt_version_id: m.prompt_version_id,
    trace_id: null,
    hidden: m.hidden,
    metadata: json(m.metadata),
    created_at: m.created_at,
  };
}

/** Copies a conversation's transcript (one thread up to a message) into a new conversation. Knex only. */
export class ConversationForkRepository {
  constructor(readonly db: Db) {}

  /** The message when it is in one of the project's conversations. */
  async findMessage(projectId: string, messageId: string): Promise<MessagePlace | undefined> {
    return this.db({ m: MessagesTableName })
      .join({ t: ThreadsTableName }, 't.id', 'm.thread_id')
      .join({ c: ConversationsTableName }, 'c.pk', 't.conversation_pk')
      .where({ 'm.id': messageId, 'c.project_id': projectId })
      .first<MessagePlace | undefined>('m.id', 'm.seq', 'm.thread_id', 't.agent_id', 't.conversation_pk');
  }

  /** True when the agent exists and its sandbox is enabled: its sessions may have a workspace to copy. */
  async agentHasSandbox(agentId: string): Promise<boolean> {
    const row = await this.db(AgentsTableName)
      .where({ id: agentId })
      .first<Pick<DbAgent, 'sandbox'> | undefined>('sandbox');
    return row?.sandbox.enabled === true;
  }

  /** Every thread of the conversation, oldest first. */
  threads(conversationPk: string): Promise<Array<Pick<DbThread, 'id' | 'agent_id'>>> {
    return this.db(ThreadsTableName)
      .where({ conversation_pk: conversationPk })
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])
      .select('id', 'agent_id');
  }

  /** In one transaction: the conversation, its thread, the messages and the summaries that cover only them. */
  async fork(plan: ForkPlan): Promise<DbConversation> {
    return this.db.transaction(async (trx: Trx) => {
      const [created] = await trx(ConversationsTableName)
        .insert({
          project_id: plan.source.project_id,
          id: plan.id,
          namespace: plan.source.namespace,
          context: JSON.stringify(plan.source.context),
        } satisfies DbConversationInsert)
        .returning('*');
      if (plan.thread) await this.copyThread(trx, created!.pk, plan.thread, plan.throughSeq);
      return created!;
    });
  }

  private async copyThread(
    trx: Trx,
    conversationPk: string,
    thread: Pick<DbThread, 'id' | 'agent_id'>,
    throughSeq: number | undefined,
  ): Promise<void> {
    // last_input_tokens stays unset: it measured the whole original thread.
    const [copy] = await trx(ThreadsTableName)
      .insert({ conversation_pk: conversationPk, agent_id: thread.agent_id })
      .returning('id');
    const q = trx(MessagesTableName).where({ thread_id: thread.id });
    if (throughSeq !== undefined) q.andWhere('seq', '<=', throughSeq);
    const messages: DbMessage[] = await q.select('*').orderBy('seq', 'asc');
    if (messages.length === 0) return;
    const copies = messages.map((m) => copyOf(m, copy!.id));
    // One row at a time keeps the new seqs in the original order (bigserial follows insertion).
    for (const row of copies) await trx(MessagesTableName).insert(row);
    const newSeqs = await trx(MessagesTableName)
      .whereIn(
        'id',
        copies.map((c) => c.id),
      )
      .select<Array<{ id: string; seq: number }>>('id', 'seq');
    const seqOfId = new Map(newSeqs.map((r) => [r.id, r.seq]));
    const seqMap = messages.map((m, i) => [m.seq, seqOfId.get(copies[i]!.id)!] as const);
    await this.copySummaries(trx, thread.id, copy!.id, seqMap, messages.at(-1)!.seq);
  }

  /** Summaries that stand only for copied messages, pointing at the copies' seqs. */
  private async copySummaries(
    trx: Trx,
    fromThreadId: string,
    toThreadId: string,
    seqMap: ReadonlyArray<readonly [number, number]>,
    lastSeq: number,
  ): Promise<void> {
    const summaries: DbThreadSummary[] = await trx(ThreadSummariesTableName)
      .where({ thread_id: fromThreadId })
      .andWhere('through_seq', '<=', lastSeq)
      .orderBy('through_seq', 'asc')
      .select('*');
    for (const s of summaries) {
      // The copy of the last message the summary covers (the newest at or before its through_seq).
      const mapped = seqMap.filter(([old]) => old <= s.through_seq).at(-1);
      if (!mapped) continue;
      const row: DbThreadSummaryInsert & { created_at: Date } = {
        thread_id: toThreadId,
        run_id: null,
        through_seq: mapped[1],
        content: s.content,
        usage: json(s.usage),
        created_at: s.created_at,
      };
      await trx(ThreadSummariesTableName).insert(row);
    }
  }
}
