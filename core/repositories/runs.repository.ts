import type { Db } from '../db/knex.js';
import {
  RunsTableName,
  type DbRun,
  type RunDoor,
  type RunSource,
  type RunOverrides,
  type RunProtocolRequest,
  type RunStatus,
} from '../db/tables/index.js';
import { RUN_EVENTS_CHANNEL } from './run-events.repository.js';
import type { Price } from '../metering/pricing.js';
import type { Page } from './types.js';

export interface RunCreate {
  id: string;
  project_id: string;
  /** The conversation's client id. */
  conversation_id: string;
  namespace: string;
  /** Template variables merged into the conversation's context. */
  context: Record<string, unknown> | undefined;
  agent_id: string;
  message_id: string;
  request_hash: string;
  workflow_id: string;
  trace_id: string | null;
  /** The user message (a string or content parts). */
  content: unknown;
  /** What the turn runs with instead of the agent's configuration. */
  overrides: RunOverrides | undefined;
  /** The door the message came through (default `api`) and what its client asked beside it. */
  door?: RunDoor;
  /** Where the run came from (default: `langgraph` for that door, else `rest`). */
  source?: RunSource;
  protocol?: RunProtocolRequest;
  /** The person the turn acts for (per-user MCP authorization). */
  end_user_id?: string | undefined;
}

/** What converse `overrides` name, as found in the project (undefined: not there). */
export interface OverrideTargets {
  model: { id: string; name: string; provider_id: string | null } | undefined;
  promptVersion: { id: string; prompt_id: string; prompt_name: string; version: number } | undefined;
}

export interface ConverseLookup {
  agent: { id: string; project_id: string; name: string } | undefined;
  conversation: { pk: string; namespace: string } | undefined;
  run: DbRun | undefined;
}

/**
 * A run as the run view shows it: the row without its plan (which holds the
 * rendered system prompt), its conversation's client id, and what the view
 * takes from the plan, the agent, the model and the pause.
 */
export type RunViewRow = Omit<DbRun, 'plan' | 'request_hash' | 'protocol'> & {
  conversation_client_id: string;
  /** The agent's name now, or at the turn's start when the agent was deleted. */
  agent_name: string | null;
  /** The provider-side model id the turn called (from its plan). */
  model: string | null;
  /** The pricing of the turn's Model resource, when it has one. */
  model_pricing: Price | null;
  approval_timeout_ms: number | null;
  /** While the run waits for approval: when it paused (its latest `run.paused`). */
  paused_at: Date | null;
  /** From the message's arrival to the turn's first output (null before it, or once its events are pruned). */
  first_token_ms: number | null;
  /** Time spent paused for approval so far, every pause of the turn (null when it never paused). */
  approval_wait_ms: number | null;
};

export type RunWithConversation = DbRun & {
  conversation_client_id: string;
  conversation_namespace: string;
  agent_name: string | null;
};

/** Which runs a list shows; every field narrows it. */
export interface RunFilter {
  projectId?: string;
  conversationPk?: string;
  agentId?: string;
  statuses?: RunStatus[];
  sources?: RunSource[];
  /** Created at or after. */
  start?: Date;
  /** Created before. */
  end?: Date;
  /**
   * Whose status timestamp (finished, else started, else created: runs keep
   * no time of their last status change) is after this (A2A's statusTimestampAfter).
   */
  statusAfter?: Date;
}

/** The time a run's status is said to date from: when it finished, else started, else was created. */
export const STATUS_TIME_SQL = 'coalesce(r.finished_at, r.started_at, r.created_at)';

const VIEW_COLUMNS = [
  'r.id',
  'r.project_id',
  'r.conversation_pk',
  'r.thread_id',
  'r.agent_id',
  'r.message_id',
  'r.status',
  'r.workflow_id',
  'r.trace_id',
  'r.parent_run_id',
  'r.prompt_version_id',
  'r.agent_version',
  'r.output',
  'r.tool_calls',
  'r.usage',
  'r.error',
  'r.warnings',
  'r.tools',
  'r.pending_approvals',
  'r.approvals',
  'r.overrides',
  'r.rolled_back',
  'r.door',
  'r.source',
  'r.pause',
  'r.last_event_seq',
  'r.created_at',
  'r.started_at',
  'r.finished_at',
  'c.id as conversation_client_id',
  'm.pricing as model_pricing',
];

/**
 * From the run's arrival to its first output event: streamed text, or the
 * answer or tool call of a step that arrived whole. The primary key
 * (run_id, seq) finds it without reading the rest of the run's events.
 */
const FIRST_TOKEN_MS = `(select round(extract(epoch from (e.created_at - r.created_at)) * 1000)::float8
    from run_events e
   where e.run_id = r.id and e.type in ('message.delta', 'message.completed', 'tool_call.created')
   order by e.seq limit 1) as first_token_ms`;

/**
 * Each pause for approval, from its `run.paused` to the event that ended it
 * (`run.resumed`, written with the last decision, or the run's end), or to
 * now while it lasts. Only read for runs that had decisions or wait now.
 */
const APPROVAL_WAIT_MS = `case when r.status = 'awaiting_approval' or r.approvals <> '[]'::jsonb then
    (select round(sum(extract(epoch from (coalesce(
              (select min(q.created_at) from run_events q
                where q.run_id = r.id and q.seq > p.seq
                  and q.type in ('run.resumed', 'run.completed', 'run.failed', 'run.cancelled')),
              now()) - p.created_at))) * 1000)::float8
       from run_events p where p.run_id = r.id and p.type = 'run.paused')
  end as approval_wait_ms`;

/** Runs (one per converse message) and the rows the converse flow writes with them. Knex only. */
export class RunsRepository {
  constructor(readonly db: Db) {}

  /** Runs with what their view needs; the pause time is looked up only for paused runs. */
  private views() {
    const { db } = this;
    return db('runs as r')
      .join('conversations as c', 'c.pk', 'r.conversation_pk')
      .leftJoin('agents as a', 'a.id', 'r.agent_id')
      .leftJoin('models as m', (j) => j.on(db.raw(`m.id = (r.plan->'model'->>'id')::uuid`)))
      .select(
        ...VIEW_COLUMNS,
        db.raw(`coalesce(a.name, r.plan->>'agent_name') as agent_name`),
        db.raw(`r.plan->'model'->>'model_id' as model`),
        db.raw(`(r.plan->>'approval_timeout_ms')::float8 as approval_timeout_ms`),
        db.raw(`case when r.status = 'awaiting_approval' then
                  (select e.created_at from run_events e
                    where e.run_id = r.id and e.type = 'run.paused' order by e.seq desc limit 1)
                end as paused_at`),
        db.raw(FIRST_TOKEN_MS),
        db.raw(APPROVAL_WAIT_MS),
      );
  }

  /** One run as its view shows it. */
  async findView(runId: string): Promise<RunViewRow | undefined> {
    return this.views().where('r.id', runId).first<RunViewRow | undefined>();
  }

  /** Runs matching the filter, newest first. */
  async listViews(filter: RunFilter, page: Page): Promise<RunViewRow[]> {
    const q = this.views();
    if (filter.projectId !== undefined) q.where('r.project_id', filter.projectId);
    if (filter.conversationPk !== undefined) q.where('r.conversation_pk', filter.conversationPk);
    if (filter.agentId !== undefined) q.where('r.agent_id', filter.agentId);
    if (filter.statuses?.length) q.whereIn('r.status', filter.statuses);
    if (filter.sources?.length) q.whereIn('r.source', filter.sources);
    if (filter.start) q.where('r.created_at', '>=', filter.start);
    if (filter.end) q.where('r.created_at', '<', filter.end);
    if (filter.statusAfter) q.whereRaw(`${STATUS_TIME_SQL} > ?`, [filter.statusAfter]);
    return (await q
      .orderBy([
        { column: 'r.created_at', order: 'desc' },
        { column: 'r.id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset)) as RunViewRow[];
  }

  /** A project's runs waiting for approval, the most recently paused first. */
  async listAwaitingApproval(
    projectId: string,
    agentId: string | undefined,
    page: Page,
  ): Promise<RunViewRow[]> {
    const q = this.views().where('r.project_id', projectId).where('r.status', 'awaiting_approval');
    if (agentId !== undefined) q.where('r.agent_id', agentId);
    return (await q
      .orderByRaw('paused_at desc nulls last, r.created_at desc, r.id desc')
      .limit(page.limit)
      .offset(page.offset)) as RunViewRow[];
  }

  /**
   * Everything a converse request checks before it writes, in one read: the
   * project (undefined when it does not exist), the agent, the conversation
   * (when it exists) and the run already made for this message id (when
   * there is one). A new message then costs one more statement (`create`).
   */
  async lookup(
    projectId: string,
    agentId: string,
    conversationId: string,
    messageId: string,
  ): Promise<ConverseLookup | undefined> {
    const { rows } = await this.db.raw<{
      rows: Array<
        DbRun & {
          a_id: string | null;
          a_project_id: string | null;
          a_name: string | null;
          conv_pk: string | null;
          conv_namespace: string | null;
        }
      >;
    }>(
      `select a.id as a_id, a.project_id as a_project_id, a.name as a_name,
              c.pk as conv_pk, c.namespace as conv_namespace, r.*
         from projects p
         left join agents a on a.id = :agent
         left join conversations c on c.project_id = p.id and c.id = :conversation
         left join runs r on r.conversation_pk = c.pk and r.message_id = :message
        where p.id = :project`,
      { project: projectId, agent: agentId, conversation: conversationId, message: messageId },
    );
    const row = rows[0];
    if (!row) return undefined;
    const { a_id, a_project_id, a_name, conv_pk, conv_namespace, ...run } = row;
    return {
      agent: a_id ? { id: a_id, project_id: a_project_id!, name: a_name! } : undefined,
      conversation: conv_pk ? { pk: conv_pk, namespace: conv_namespace! } : undefined,
      run: run.id ? run : undefined,
    };
  }

  /**
   * A new message, as one statement (so atomically, without a transaction's
   * extra round trips): the conversation (created, or its context merged:
   * given keys replace stored ones), the session's thread (created with its
   * first message), the run, the user message and the run's `run.created`
   * event, announced to readers on commit. Returns nothing when the
   * conversation turned out to be in another namespace (a concurrent create).
   * A concurrent request with the same message id makes this fail with a
   * unique violation: the caller then finds that request's run.
   */
  async create(row: RunCreate): Promise<DbRun | undefined> {
    const { rows } = await this.db.raw<{ rows: DbRun[] }>(
      `with conv as (
         insert into conversations (project_id, id, namespace, context)
         values (:project, :conversation, :namespace, :context::jsonb)
         on conflict (project_id, id) do update
           set updated_at = now(), context = conversations.context || excluded.context
           where conversations.namespace = excluded.namespace
         returning pk
       ), thread as (
         insert into threads (conversation_pk, agent_id) select pk, :agent from conv
         on conflict (conversation_pk, agent_id) where agent_id is not null do update set updated_at = now()
         returning id
       ), run as (
         insert into runs (id, project_id, conversation_pk, thread_id, agent_id, message_id, request_hash,
                           workflow_id, trace_id, status, last_event_seq, overrides, door, source, protocol, end_user_id)
         select :run, :project, conv.pk, thread.id, :agent, :message, :hash, :workflow, :trace, 'queued', 1,
                :overrides::jsonb, :door, :source, :protocol::jsonb, :end_user
           from conv, thread
         returning *
       ), msg as (
         insert into messages (thread_id, run_id, step_key, role, content, trace_id)
         select thread_id, id, 'user', 'user', :content::jsonb, :trace from run
       ), ev as (
         insert into run_events (run_id, seq, type, data, key)
         select id, 1, 'run.created',
                jsonb_build_object('run_id', id, 'conversation_id', :conversation::text, 'thread_id', thread_id,
                                   'message_id', message_id, 'status', 'queued'),
                'created'
           from run
         returning data
       )
       select run.*, pg_notify(:channel, json_build_object('r', run.id, 's', 1, 't', 'run.created', 'd', ev.data)::text)
         from run, ev`,
      {
        project: row.project_id,
        conversation: row.conversation_id,
        namespace: row.namespace,
        context: JSON.stringify(row.context ?? {}),
        agent: row.agent_id,
        run: row.id,
        message: row.message_id,
        hash: row.request_hash,
        workflow: row.workflow_id,
        trace: row.trace_id,
        content: JSON.stringify(row.content),
        overrides: row.overrides ? JSON.stringify(row.overrides) : null,
        door: row.door ?? 'api',
        source: row.source ?? (row.door === 'langgraph' ? 'langgraph' : 'rest'),
        protocol: row.protocol ? JSON.stringify(row.protocol) : null,
        end_user: row.end_user_id ?? null,
        channel: RUN_EVENTS_CHANNEL,
      },
    );
    const run = rows[0];
    if (!run) return undefined;
    delete (run as Partial<{ pg_notify: unknown }>).pg_notify;
    return run;
  }

  /**
   * The model and prompt version converse `overrides` name, each only when it
   * belongs to the project (a prompt version: through its prompt), in one read.
   */
  async overrideTargets(
    projectId: string,
    ids: { modelId: string | undefined; promptVersionId: string | undefined },
  ): Promise<OverrideTargets> {
    const { rows } = await this.db.raw<{
      rows: Array<{
        model: OverrideTargets['model'] | null;
        version: OverrideTargets['promptVersion'] | null;
      }>;
    }>(
      // provider_id: the model's own, else the only provider of its type (who serves it at call time).
      `select (select jsonb_build_object('id', m.id, 'name', m.name, 'provider_id',
                        coalesce(m.provider_id,
                                 (select (array_agg(o.id))[1] from providers o
                                   where o.provider_type = m.provider_type having count(*) = 1)))
                 from models m where m.id = :model and m.project_id = :project) as model,
              (select jsonb_build_object('id', v.id, 'prompt_id', p.id, 'prompt_name', p.name, 'version', v.version)
                 from prompt_versions v join prompts p on p.id = v.prompt_id
                where v.id = :version and p.project_id = :project) as version`,
      { project: projectId, model: ids.modelId ?? null, version: ids.promptVersionId ?? null },
    );
    const row = rows[0];
    return { model: row?.model ?? undefined, promptVersion: row?.version ?? undefined };
  }

  async findById(runId: string): Promise<DbRun | undefined> {
    return this.db(RunsTableName).where({ id: runId }).first();
  }

  /** Runs waiting for an MCP server's authorization (the project's, or one end user's when named). */
  async awaitingAuthorization(serverId: string, endUserId: string | null): Promise<DbRun[]> {
    const q = this.db(RunsTableName)
      .where({ status: 'awaiting_authorization' })
      .whereRaw(`pause->'details'->>'server_id' = ?`, [serverId]);
    if (endUserId !== null) void q.whereRaw(`pause->'details'->>'end_user_id' = ?`, [endUserId]);
    return q;
  }

  /** A run with its conversation's client id and namespace, and its agent's name (now, or at the turn's start). */
  findWithConversation(runId: string): Promise<RunWithConversation | undefined> {
    return this.db('runs as r')
      .join('conversations as c', 'c.pk', 'r.conversation_pk')
      .leftJoin('agents as a', 'a.id', 'r.agent_id')
      .where('r.id', runId)
      .first<RunWithConversation | undefined>(
        'r.*',
        'c.id as conversation_client_id',
        'c.namespace as conversation_namespace',
        this.db.raw(`coalesce(a.name, r.plan->>'agent_name') as agent_name`),
      );
  }
}
