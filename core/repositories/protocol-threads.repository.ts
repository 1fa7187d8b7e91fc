import type { Db } from '../db/knex.js';
import {
  ConversationsTableName,
  RUN_STATUSES,
  RunsTableName,
  TERMINAL_STATUSES,
  type DbConversation,
  type DbRun,
} from '../db/tables/index.js';
import type { Page } from './types.js';

/** The Agent Protocol's thread statuses, from the conversation's runs. */
export type ThreadStatus = 'idle' | 'busy' | 'interrupted' | 'error';

export type ThreadRow = DbConversation & { status: ThreadStatus };

export interface ThreadFilter {
  metadata?: Record<string, unknown>;
  status?: ThreadStatus;
  ids?: string[];
  /** Conversations of this namespace are left out (a stateless run's throwaway thread). */
  notNamespace?: string;
}

export type ThreadSort = { by: 'thread_id' | 'status' | 'created_at' | 'updated_at'; order: 'asc' | 'desc' };

/** A stored message of the conversation with what the protocol shows of it (see api/protocols/langgraph/messages.ts). */
export interface TranscriptMessage {
  id: string;
  /** The order written (bigserial across the conversation's threads). */
  seq: number;
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: unknown;
  tool_calls: unknown;
  tool_call_id: string | null;
  usage: unknown;
  metadata: unknown;
  step_key: string | null;
  run_id: string | null;
  message_id: string | null;
  created_at: Date;
}

const UNFINISHED: string[] = RUN_STATUSES.filter((s) => !TERMINAL_STATUSES.has(s));

/**
 * A conversation's status as a thread: `interrupted` while a run waits for
 * someone, `busy` while one is queued or running, else `error` when its
 * latest (not rolled back) run failed, else `idle`.
 */
const STATUS_SQL = `coalesce(
  (select case when bool_or(r.status like 'awaiting%') then 'interrupted' else 'busy' end
     from runs r where r.conversation_pk = c.pk and r.status in (${UNFINISHED.map((s) => `'${s}'`).join(', ')})
   having count(*) > 0),
  (select case when r.status = 'failed' then 'error' else 'idle' end
     from runs r where r.conversation_pk = c.pk and not r.rolled_back
    order by r.created_at desc limit 1),
  'idle')`;

/** Knex only: what the Agent Protocol reads of conversations and their runs, beside the conversations repository. */
export class ProtocolThreadsRepository {
  constructor(private readonly db: Db) {}

  async insert(row: {
    project_id: string;
    id: string;
    metadata: Record<string, unknown>;
    namespace?: string;
  }) {
    const [created] = await this.db(ConversationsTableName)
      .insert({
        project_id: row.project_id,
        id: row.id,
        namespace: row.namespace ?? 'default',
        context: '{}',
        metadata: JSON.stringify(row.metadata),
      })
      .returning('*');
    return created!;
  }

  async find(projectId: string, id: string): Promise<ThreadRow | undefined> {
    return this.db({ c: ConversationsTableName })
      .where({ 'c.project_id': projectId, 'c.id': id })
      .first('c.*', this.db.raw(`${STATUS_SQL} as status`));
  }

  /** The project's conversations as threads (not an eval's scratch ones), with their status, filtered. */
  private filtered(projectId: string, filter: ThreadFilter) {
    const inner = this.db({ c: ConversationsTableName })
      .where('c.project_id', projectId)
      .whereNull('c.eval_id')
      .select('c.*', this.db.raw(`${STATUS_SQL} as status`));
    if (filter.metadata) inner.whereRaw('c.metadata @> ?::jsonb', [JSON.stringify(filter.metadata)]);
    if (filter.ids) inner.whereIn('c.id', filter.ids);
    if (filter.notNamespace) inner.whereNot('c.namespace', filter.notNamespace);
    const q = this.db.from(inner.as('t'));
    if (filter.status) q.where('t.status', filter.status);
    return q;
  }

  async search(projectId: string, filter: ThreadFilter, sort: ThreadSort, page: Page): Promise<ThreadRow[]> {
    const column = sort.by === 'thread_id' ? 'id' : sort.by;
    return this.filtered(projectId, filter)
      .select('t.*')
      .orderBy([
        { column: `t.${column}`, order: sort.order },
        { column: 't.pk', order: sort.order },
      ])
      .limit(page.limit)
      .offset(page.offset);
  }

  async count(projectId: string, filter: ThreadFilter): Promise<number> {
    const row = await this.filtered(projectId, filter).count<{ n: string }[]>({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }

  /** Merges `metadata` into the conversation's (top-level keys replaced). */
  async mergeMetadata(pk: string, metadata: Record<string, unknown>): Promise<void> {
    await this.db(ConversationsTableName)
      .where({ pk })
      .update({
        metadata: this.db.raw('metadata || ?::jsonb', [JSON.stringify(metadata)]) as unknown as string,
        updated_at: this.db.fn.now(),
      });
  }

  /**
   * The conversation's transcript across its agents' threads, in the order
   * written, without hidden corrective exchanges; each message with its run's
   * `message_id` (a human message's id in the protocol). Up to `upToSeq` when given.
   */
  async transcript(conversationPk: string, upToSeq?: number): Promise<TranscriptMessage[]> {
    const q = this.db('messages as m')
      .join('threads as t', 't.id', 'm.thread_id')
      .leftJoin('runs as r', 'r.id', 'm.run_id')
      .where('t.conversation_pk', conversationPk)
      .andWhere('m.hidden', false)
      .select(
        'm.id',
        'm.seq',
        'm.role',
        'm.content',
        'm.tool_calls',
        'm.tool_call_id',
        'm.usage',
        'm.metadata',
        'm.step_key',
        'm.run_id',
        'm.created_at',
        'r.message_id',
      )
      .orderBy('m.seq');
    if (upToSeq !== undefined) q.andWhere('m.seq', '<=', upToSeq);
    return q;
  }

  /** The conversation's runs that the protocol shows (rolled-back and forgotten ones are gone), newest first. */
  async runs(conversationPk: string, filter: { status?: string[] }, page: Page): Promise<DbRun[]> {
    const q = this.db(RunsTableName)
      .where({ conversation_pk: conversationPk, rolled_back: false })
      .whereRaw(`coalesce(protocol->>'forgotten', 'false') <> 'true'`);
    if (filter.status) q.whereIn('status', filter.status);
    return q
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset);
  }

  /** The conversation's runs not yet ended, oldest first. */
  async unfinished(conversationPk: string): Promise<DbRun[]> {
    return this.db(RunsTableName)
      .where({ conversation_pk: conversationPk })
      .whereIn('status', UNFINISHED)
      .orderBy('created_at');
  }

  /** The protocol's DELETE of an ended run: gone from the protocol's answers, kept as our record. */
  async forgetRun(runId: string): Promise<void> {
    await this.db(RunsTableName)
      .where({ id: runId })
      .update({
        protocol: this.db.raw(
          `coalesce(protocol, '{}'::jsonb) || '{"forgotten": true}'::jsonb`,
        ) as unknown as string,
      });
  }

  /** An agent of the project named by its id or its name (an id wins over a name that looks like one). */
  async findAgent(projectId: string, idOrName: string): Promise<{ id: string; name: string } | undefined> {
    const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrName);
    const q = this.db('agents').where({ project_id: projectId });
    if (isUuid) q.andWhere((w) => w.where('id', idOrName).orWhere('name', idOrName));
    else q.andWhere('name', idOrName);
    return q.orderByRaw('(id::text = ?) desc', [idOrName.toLowerCase()]).first('id', 'name');
  }

  /** A run of the project, with its conversation's client id. */
  async findRun(
    projectId: string,
    runId: string,
  ): Promise<(DbRun & { conversation_id: string }) | undefined> {
    return this.db({ r: RunsTableName })
      .join({ c: ConversationsTableName }, 'c.pk', 'r.conversation_pk')
      .where({ 'r.project_id': projectId, 'r.id': runId })
      .first('r.*', 'c.id as conversation_id');
  }
}
