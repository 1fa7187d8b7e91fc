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
  type RunStatus,
} from '../db/tables/index.js';
import type { Price } from '../metering/pricing.js';
import type { Page } from './types.js';
import type { ConversationFilter } from './types.js';
import { RunEventsRepository } from './run-events.repository.js';
import { agentOfSessionWorkflowId, sessionWorkflowId } from '../../temporal.config.js';
import { subAgentConversationsBelow, type TreeConversation } from './conversation-tree.js';

/** A session of a conversation or of a sub-agent conversation below it. */
export interface TreeSession {
  agentId: string;
  workflowId: string;
  /** The client's id of the conversation the session is of. */
  conversationId: string;
}

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
  /**
   * Traces its sub-agent runs share with a caller whose conversation stays
   * (deleting a sub-agent conversation on its own): only the deleted
   * conversations' spans went, and only theirs are swept.
   */
  sharedTraceIds?: string[];
}

/** Which late spans of a deleted conversation to sweep. */
export interface SweepSpansArgs {
  projectId: string;
  conversationId: string;
  /** The sub-agent conversations deleted with it: their late spans go too. */
  subAgentConversationIds?: string[];
  before: string;
  traceIds: string[];
  /** Traces shared with a caller's conversation that stays: only the deleted conversations' spans go. */
  sharedTraceIds?: string[];
}

/** A thread with the conversation it belongs to. */
export interface DbThreadInConversation extends DbThread {
  conversation_id: string;
  project_id: string;
}

/** Tokens of runs whose cost was not recorded, by the model they called and its price then. */
export interface UnrecordedCost {
  model: string | null;
  pricing: Price | null;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}

/** A conversation as its list shows it: with its last run, and what its runs cost. */
export type ConversationListRow = DbConversation & {
  last_run_id: string | null;
  last_agent_id: string | null;
  /** The agent's name now, or at the run's start when the agent was deleted. */
  last_agent_name: string | null;
  last_status: RunStatus | null;
  last_run_at: Date | null;
  /** Null when it has no run. */
  run_count: number | null;
  /** The runs' recorded costs, summed (numeric: text); null when none recorded one. */
  recorded_cost_usd: string | null;
  /** What runs without a recorded cost used, for an estimate at their model's price. */
  unrecorded: UnrecordedCost[] | null;
};

/** The conversation's latest run (`last`), with its agent's name. */
const LAST_RUN = `left join lateral (
    select r.id as run_id, r.agent_id, coalesce(a.name, r.plan->>'agent_name') as agent_name, r.status, r.created_at
      from runs r left join agents a on a.id = r.agent_id
     where r.conversation_pk = c.pk
     order by r.created_at desc, r.id desc limit 1) last on true`;

/**
 * What the conversation's runs cost (`spent`): their recorded costs summed,
 * and the tokens of runs without one grouped by model and price, for the
 * service to estimate as the run view does.
 */
const RUN_COSTS = `left join lateral (
    select sum(g.runs)::int as run_count, sum(g.recorded) as recorded_cost_usd,
           jsonb_agg(jsonb_build_object('model', g.model, 'pricing', g.pricing,
                       'input_tokens', g.input_tokens, 'output_tokens', g.output_tokens,
                       'cache_read_tokens', g.cache_read_tokens, 'cache_write_tokens', g.cache_write_tokens))
             filter (where g.input_tokens + g.output_tokens > 0) as unrecorded
      from (select r.plan->'model'->>'model_id' as model, m.pricing, count(*) as runs,
                   sum((r.usage->>'cost_usd')::numeric) as recorded,
                   sum(case when r.usage->'cost_usd' is null then coalesce((r.usage->>'input_tokens')::bigint, 0) else 0 end) as input_tokens,
                   sum(case when r.usage->'cost_usd' is null then coalesce((r.usage->>'output_tokens')::bigint, 0) else 0 end) as output_tokens,
                   sum(case when r.usage->'cost_usd' is null then coalesce((r.usage->>'cache_read_tokens')::bigint, 0) else 0 end) as cache_read_tokens,
                   sum(case when r.usage->'cost_usd' is null then coalesce((r.usage->>'cache_write_tokens')::bigint, 0) else 0 end) as cache_write_tokens
              from runs r left join models m on m.id = (r.plan->'model'->>'id')::uuid
             where r.conversation_pk = c.pk
             group by 1, 2) g) spent on true`;

/** Knex only. */
export class ConversationsRepository {
  private readonly events: RunEventsRepository;

  constructor(readonly db: Db) {
    this.events = new RunEventsRepository(db);
  }

  async insert(
    row: Pick<DbConversation, 'project_id' | 'id' | 'namespace' | 'context'> &
      Partial<Pick<DbConversation, 'budget'>>,
  ): Promise<DbConversation> {
    const { budget, ...rest } = row;
    const [created] = await this.db(ConversationsTableName)
      // jsonb takes JSON text; pg would send a bare object in an array-literal shape otherwise.
      .insert({
        ...rest,
        context: JSON.stringify(row.context),
        ...(budget ? { budget: JSON.stringify(budget) } : {}),
      } satisfies DbConversationInsert)
      .returning('*');
    return created!;
  }

  /**
   * A page of the project's conversations, newest first, each with its last
   * run and what its runs cost, in one statement: each conversation's runs
   * are found through the runs (conversation_pk, message_id) index, read
   * once for the latest and once for the costs.
   */
  async list(projectId: string, filter: ConversationFilter, page: Page): Promise<ConversationListRow[]> {
    const q = this.db({ c: ConversationsTableName }).where('c.project_id', projectId);
    // An eval's scratch conversations (migrations/20261203000100_evals.ts) are the eval's, not the project's sessions.
    q.whereNull('c.eval_id');
    if (filter.namespace !== undefined) q.andWhere('c.namespace', filter.namespace);
    if (filter.agent_id !== undefined) {
      const agentId = filter.agent_id;
      q.whereExists((sub) =>
        sub
          .select(this.db.raw('1'))
          .from(ThreadsTableName)
          .whereRaw('threads.conversation_pk = c.pk')
          .andWhere('threads.agent_id', agentId),
      );
    }
    return q
      .joinRaw(LAST_RUN)
      .joinRaw(RUN_COSTS)
      .select<ConversationListRow[]>(
        'c.*',
        'last.run_id as last_run_id',
        'last.agent_id as last_agent_id',
        'last.agent_name as last_agent_name',
        'last.status as last_status',
        'last.created_at as last_run_at',
        'spent.run_count',
        'spent.recorded_cost_usd',
        'spent.unrecorded',
      )
      .orderBy([
        { column: 'c.created_at', order: 'desc' },
        { column: 'c.pk', order: 'desc' },
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
    patch: Partial<Pick<DbConversation, 'namespace' | 'context' | 'budget'>>,
  ): Promise<DbConversation | undefined> {
    const { budget, ...rest } = patch;
    const row: DbConversationUpdate = { ...rest, updated_at: this.db.fn.now() };
    if (patch.context !== undefined) row.context = JSON.stringify(patch.context);
    if (budget !== undefined) row.budget = budget === null ? null : JSON.stringify(budget);
    const [updated] = await this.db(ConversationsTableName).where({ pk }).update(row).returning('*');
    return updated;
  }

  /**
   * Every session the conversation had (one per agent): from its runs (whose
   * workflow id outlives a deleted agent) and its agent threads.
   */
  async sessionsOf(
    conversation: Pick<DbConversation, 'pk' | 'id'>,
    q: Knex | Knex.Transaction = this.db,
  ): Promise<Array<{ agentId: string; workflowId: string }>> {
    const runs = await q(RunsTableName)
      .where({ conversation_pk: conversation.pk })
      .distinct<Array<{ workflow_id: string; agent_id: string | null }>>('workflow_id', 'agent_id');
    const threads = await this.listSessionThreads(conversation.pk, q);
    const sessions = new Map<string, string>();
    for (const r of runs) {
      const agentId = r.agent_id ?? agentOfSessionWorkflowId(r.workflow_id);
      if (agentId) sessions.set(r.workflow_id, agentId);
    }
    for (const t of threads) sessions.set(sessionWorkflowId(t.agent_id, conversation.id), t.agent_id);
    return [...sessions].map(([workflowId, agentId]) => ({ agentId, workflowId }));
  }

  /** The conversations its runs' sub-agent calls ran in, and theirs, nearest first. */
  subAgentConversationsBelow(pk: string): Promise<TreeConversation[]> {
    return subAgentConversationsBelow(this.db, pk, false);
  }

  /**
   * The sessions of the conversation and of the sub-agent conversations
   * below it (conversation-tree.ts), each with the conversation it is of.
   */
  async treeSessionsOf(
    root: TreeConversation,
    q: Knex | Knex.Transaction = this.db,
    below?: TreeConversation[],
  ): Promise<TreeSession[]> {
    const sessions: TreeSession[] = [];
    for (const c of [root, ...(below ?? (await subAgentConversationsBelow(q, root.pk, false)))])
      for (const s of await this.sessionsOf(c, q)) sessions.push({ ...s, conversationId: c.id });
    return sessions;
  }

  /**
   * The conversation and everything recorded of it, in one transaction: its
   * threads, messages, runs, run events and summaries (by cascade), and the
   * spans of its turns — every trace one of its runs or messages ran in, and
   * every trace holding a span that carries its id (`gen_ai.conversation.id`,
   * model calls). A trace its sub-agent runs share with their caller's
   * conversation, which stays, loses only this conversation's spans.
   * Readers still following an unfinished run get `run.cancelled` (the
   * notification outlives the row). Nothing happens when the conversation
   * is already gone.
   */
  async deleteWithData(conversation: TreeConversation): Promise<DeletedData> {
    return this.db.transaction(async (trx: Knex.Transaction) => {
      const deletedAt = await this.now(trx);
      if (!(await this.lock(trx, conversation.pk))) return { deleted: false, deletedAt, recentTraceIds: [] };
      return this.deleteLocked(trx, [conversation], deletedAt);
    });
  }

  /**
   * The conversation with the sub-agent conversations below it, as
   * `deleteWithData` deletes one, in one transaction that locks the tree
   * first (it cannot grow meanwhile). When the tree has a session that is
   * not among `ended` (a sub-agent call stored its conversation after the
   * sessions were ended), nothing is deleted and `unended` names it: the
   * caller ends it and asks again.
   */
  async deleteTreeWithData(
    root: TreeConversation,
    ended: ReadonlySet<string>,
  ): Promise<DeletedData & { unended?: TreeSession[]; subAgentConversationIds?: string[] }> {
    return this.db.transaction(async (trx: Knex.Transaction) => {
      const deletedAt = await this.now(trx);
      if (!(await this.lock(trx, root.pk))) return { deleted: false, deletedAt, recentTraceIds: [] };
      const below = await subAgentConversationsBelow(trx, root.pk, true);
      const unended = (await this.treeSessionsOf(root, trx, below)).filter((s) => !ended.has(s.workflowId));
      if (unended.length) return { deleted: false, deletedAt, recentTraceIds: [], unended };
      const data = await this.deleteLocked(trx, [root, ...below], deletedAt);
      return { ...data, subAgentConversationIds: below.map((c) => c.id) };
    });
  }

  private async now(trx: Knex.Transaction): Promise<string> {
    const { rows } = await trx.raw<{ rows: Array<{ now: Date }> }>('select now() as now');
    return rows[0]!.now.toISOString();
  }

  private async lock(trx: Knex.Transaction, pk: string): Promise<boolean> {
    return !!(await trx(ConversationsTableName).where({ pk }).forUpdate().first('pk'));
  }

  /** Deletes locked conversations (of one project) with their runs' events and spans. */
  private async deleteLocked(
    trx: Knex.Transaction,
    conversations: TreeConversation[],
    deletedAt: string,
  ): Promise<DeletedData> {
    const pks = conversations.map((c) => c.pk);
    const open = await trx(RunsTableName)
      .whereIn('conversation_pk', pks)
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
           from runs where conversation_pk = any(:pks::uuid[]) and trace_id is not null
         union all
         select m.trace_id, false from messages m join threads t on t.id = m.thread_id
          where t.conversation_pk = any(:pks::uuid[]) and m.trace_id is not null
         union all
         select trace_id, false from spans where conversation_id = any(:ids::text[]) and project_id = :project
       ) t group by trace_id`,
      { pks, ids: conversations.map((c) => c.id), project: conversations[0]!.project_id },
    );
    // A sub-agent's turn runs in its caller's trace: where the caller's conversation stays, only its own spans go.
    const sharedRows = await trx.raw<{ rows: Array<{ trace_id: string }> }>(
      `select distinct r.trace_id from runs r join runs p on p.id = r.parent_run_id
        where r.conversation_pk = any(:pks::uuid[]) and r.trace_id is not null
          and p.trace_id = r.trace_id and p.conversation_pk <> all(:pks::uuid[])`,
      { pks },
    );
    const shared = new Set(sharedRows.rows.map((t) => t.trace_id));
    const ids = conversations.map((c) => c.id);
    const projectId = conversations[0]!.project_id;
    await this.deleteTraces(
      trx,
      traces.rows.map((t) => t.trace_id).filter((t) => !shared.has(t)),
    );
    await this.deleteSpansOf(trx, { projectId, conversationIds: ids, traceIds: [...shared] });
    await trx(ConversationsTableName).whereIn('pk', pks).delete();
    return {
      deleted: true,
      deletedAt,
      recentTraceIds: traces.rows.filter((t) => t.recent && !shared.has(t.trace_id)).map((t) => t.trace_id),
      ...(shared.size ? { sharedTraceIds: [...shared] } : {}),
    };
  }

  /** In traces shared with conversations that stay: the spans of the deleted conversations only. */
  private async deleteSpansOf(
    conn: Db | Knex.Transaction,
    args: { projectId: string; conversationIds: string[]; traceIds: string[] },
  ): Promise<number> {
    if (args.traceIds.length === 0) return 0;
    return conn(SpansTableName)
      .whereRaw('trace_id = any(?::text[])', [args.traceIds])
      .whereIn('conversation_id', args.conversationIds)
      .andWhere({ project_id: args.projectId })
      .delete();
  }

  /**
   * Spans of a deleted conversation that were exported after its delete:
   * the given traces, and traces holding a span with its id that started
   * before the delete (a recreated conversation's spans start later).
   */
  async sweepSpans(args: SweepSpansArgs): Promise<number> {
    const found = await this.db(SpansTableName)
      .whereIn('conversation_id', [args.conversationId, ...(args.subAgentConversationIds ?? [])])
      .andWhere({ project_id: args.projectId })
      .andWhere('start_time', '<=', args.before)
      .distinct('trace_id');
    const shared = new Set(args.sharedTraceIds ?? []);
    const whole = [...new Set([...args.traceIds, ...found.map((t) => t.trace_id)])].filter(
      (t) => !shared.has(t),
    );
    return (
      (await this.deleteTraces(this.db, whole)) +
      (await this.deleteSpansOf(this.db, {
        projectId: args.projectId,
        conversationIds: [args.conversationId, ...(args.subAgentConversationIds ?? [])],
        traceIds: [...shared],
      }))
    );
  }

  /** Whole traces; `= any` lets Postgres use the hash index on trace_id. */
  private async deleteTraces(conn: Db | Knex.Transaction, traceIds: string[]): Promise<number> {
    if (traceIds.length === 0) return 0;
    return conn(SpansTableName).whereRaw('trace_id = any(?::text[])', [traceIds]).delete();
  }

  /** The conversation's agent threads (one per session), the most recently active first. */
  listSessionThreads(
    pk: string,
    q: Knex | Knex.Transaction = this.db,
  ): Promise<Array<{ id: string; agent_id: string }>> {
    return q(ThreadsTableName)
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
