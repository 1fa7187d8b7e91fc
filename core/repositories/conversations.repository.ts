import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import {
  ConversationsTableName,
  MessagesTableName,
  RunsTableName,
  SpansTableName,
  TERMINAL_STATUSES,
  ThreadSummariesTableName,
  ThreadsTableName,
  type DbConversation,
  type DbConversationInsert,
  type DbConversationUpdate,
  type DbMessage,
  type DbThread,
  type DbThreadSummary,
} from '../db/tables/index.js';
import type { Page } from './types.js';
import type { ConversationFilter } from './types.js';
import { RunEventsRepository } from './run-events.repository.js';
import { agentOfSessionWorkflowId, sessionWorkflowId } from '../../temporal.config.js';

/** A summary of a thread's earlier messages with the last message it stands for (null once that message is gone). */
export type ThreadSummaryView = Omit<DbThreadSummary, 'through_seq'> & { through_message_id: string | null };

/** What `deleteWithData` did. */
export interface DeletedData {
  /** False when the conversation was already gone. */
  deleted: boolean;
  /** The database's clock at the delete (ISO 8601): later spans under the same id are a new conversation's. */
  deletedAt: string;
  /** Traces of turns that were running, or ended shortly before: where late spans may still land. */
  recentTraceIds: string[];
}

/** Which late spans of a deleted conversation to sweep. */
export interface SweepSpansArgs {
  projectId: string;
  conversationId: string;
  before: string;
  traceIds: string[];
}

/** A thread with the conversation it belongs to. */
export interface DbThreadInConversation extends DbThread {
  conversation_id: string;
  project_id: string;
}

/** Knex only. */
export class ConversationsRepository {
  private readonly events: RunEventsRepository;

  constructor(readonly db: Db) {
    this.events = new RunEventsRepository(db);
  }

  async insert(
    row: Pick<DbConversation, 'project_id' | 'id' | 'namespace' | 'context'>,
  ): Promise<DbConversation> {
    const [created] = await this.db(ConversationsTableName)
      // jsonb takes JSON text; pg would send a bare object in an array-literal shape otherwise.
      .insert({ ...row, context: JSON.stringify(row.context) } satisfies DbConversationInsert)
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

  /** Whether the project has a conversation with this id (the sandbox reaper keeps its sandboxes). */
  async exists(projectId: string, id: string): Promise<boolean> {
    return Boolean(await this.db(ConversationsTableName).where({ project_id: projectId, id }).first('pk'));
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
    const row: DbConversationUpdate = { ...patch, updated_at: this.db.fn.now() };
    if (patch.context !== undefined) row.context = JSON.stringify(patch.context);
    const [updated] = await this.db(ConversationsTableName).where({ pk }).update(row).returning('*');
    return updated;
  }

  /**
   * Every session the conversation had (one per agent): from its runs (whose
   * workflow id outlives a deleted agent) and its agent threads.
   */
  async sessionsOf(conversation: DbConversation): Promise<Array<{ agentId: string; workflowId: string }>> {
    const [runs, threads] = await Promise.all([
      this.db(RunsTableName).where({ conversation_pk: conversation.pk }).distinct('workflow_id', 'agent_id'),
      this.listSessionThreads(conversation.pk),
    ]);
    const sessions = new Map<string, string>();
    for (const r of runs) {
      const agentId = r.agent_id ?? agentOfSessionWorkflowId(r.workflow_id);
      if (agentId) sessions.set(r.workflow_id, agentId);
    }
    for (const t of threads) sessions.set(sessionWorkflowId(t.agent_id, conversation.id), t.agent_id);
    return [...sessions].map(([workflowId, agentId]) => ({ agentId, workflowId }));
  }

  /**
   * The conversation and everything recorded of it, in one transaction: its
   * threads, messages, runs, run events and summaries (by cascade), and the
   * spans of its turns — every trace one of its runs or messages ran in, and
   * every trace holding a span that carries its id (`gen_ai.conversation.id`,
   * model calls). Readers still following an unfinished run get
   * `run.cancelled` (the notification outlives the row). Nothing happens when
   * the conversation is already gone.
   */
  async deleteWithData(conversation: Pick<DbConversation, 'pk' | 'project_id' | 'id'>): Promise<DeletedData> {
    const { pk } = conversation;
    return this.db.transaction(async (trx: Knex.Transaction) => {
      const { rows } = await trx.raw<{ rows: Array<{ now: Date }> }>('select now() as now');
      const deletedAt = rows[0]!.now.toISOString();
      const found = await trx(ConversationsTableName).where({ pk }).forUpdate().first('pk');
      if (!found) return { deleted: false, deletedAt, recentTraceIds: [] };
      const open = await trx(RunsTableName)
        .where({ conversation_pk: pk })
        .whereNotIn('status', [...TERMINAL_STATUSES])
        .select('id');
      for (const run of open)
        await this.events.append(
          run.id,
          'run.cancelled',
          { status: 'cancelled', reason: 'conversation_deleted' },
          'final',
          trx,
        );
      const traces = await trx.raw<{ rows: Array<{ trace_id: string; recent: boolean }> }>(
        `select trace_id, bool_or(recent) as recent from (
           select trace_id, finished_at is null or finished_at > now() - interval '20 minutes' as recent
             from runs where conversation_pk = :pk and trace_id is not null
           union all
           select m.trace_id, false from messages m join threads t on t.id = m.thread_id
            where t.conversation_pk = :pk and m.trace_id is not null
           union all
           select trace_id, false from spans where conversation_id = :id and project_id = :project
         ) t group by trace_id`,
        { pk, id: conversation.id, project: conversation.project_id },
      );
      await this.deleteTraces(
        trx,
        traces.rows.map((t) => t.trace_id),
      );
      await trx(ConversationsTableName).where({ pk }).delete();
      return {
        deleted: true,
        deletedAt,
        recentTraceIds: traces.rows.filter((t) => t.recent).map((t) => t.trace_id),
      };
    });
  }

  /**
   * Spans of a deleted conversation that were exported after its delete:
   * the given traces, and traces holding a span with its id that started
   * before the delete (a recreated conversation's spans start later).
   */
  async sweepSpans(args: SweepSpansArgs): Promise<number> {
    const found = await this.db(SpansTableName)
      .where({ conversation_id: args.conversationId, project_id: args.projectId })
      .andWhere('start_time', '<=', args.before)
      .distinct('trace_id');
    return this.deleteTraces(this.db, [...new Set([...args.traceIds, ...found.map((t) => t.trace_id)])]);
  }

  /** Whole traces; `= any` lets Postgres use the hash index on trace_id. */
  private async deleteTraces(conn: Db | Knex.Transaction, traceIds: string[]): Promise<number> {
    if (traceIds.length === 0) return 0;
    return conn(SpansTableName).whereRaw('trace_id = any(?::text[])', [traceIds]).delete();
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

  /**
   * A thread's summaries, oldest first, each with the last message it stands
   * for (summaries replace the messages up to it in the model's context).
   */
  async listSummaries(threadId: string): Promise<ThreadSummaryView[]> {
    return this.db({ s: ThreadSummariesTableName })
      .leftJoin({ m: MessagesTableName }, function () {
        this.on('m.thread_id', '=', 's.thread_id').andOn('m.seq', '=', 's.through_seq');
      })
      .where('s.thread_id', threadId)
      .orderBy('s.through_seq', 'asc')
      .select<ThreadSummaryView[]>(
        's.id',
        's.thread_id',
        's.run_id',
        's.content',
        's.usage',
        's.created_at',
        'm.id as through_message_id',
      );
  }

  /** Oldest first, by insertion order; `afterSeq` is exclusive. */
  async listMessages(threadId: string, afterSeq: number | undefined, limit: number): Promise<DbMessage[]> {
    const q = this.db(MessagesTableName).where({ thread_id: threadId });
    if (afterSeq !== undefined) q.andWhere('seq', '>', afterSeq);
    return q.select('*').orderBy('seq', 'asc').limit(limit);
  }
}
