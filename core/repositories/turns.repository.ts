import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import {
  RunsTableName,
  type DbAgent,
  type DbConversation,
  type DbModel,
  type DbPromptVersion,
  type DbProvider,
  type DbRun,
  type DbSchema,
  type StoredRunPause,
  type TurnError,
} from '../db/tables/index.js';
import { RUN_BUDGETS_SQL, type RunBudgets } from './budgets.repository.js';
import type { McpEntry } from './types.js';

type Conn = Db | Knex.Transaction;

/**
 * A run with what its turn resolves at start (`j_*`, null once the plan is
 * pinned) and its model's provider. Rows read as JSON (`to_jsonb`) carry
 * their timestamps as text; none of them is read.
 */
export type TurnStartRow = DbRun & {
  j_agent: Omit<DbAgent, 'created_at' | 'updated_at'> | null;
  j_conversation_id: string | null;
  j_context: DbConversation['context'] | null;
  j_virtual_key_id: string | null;
  j_model: Pick<DbModel, 'id' | 'name' | 'model_id' | 'provider_id' | 'parameters'> | null;
  j_prompt: Pick<DbPromptVersion, 'id' | 'version' | 'template'> | null;
  j_schema: Pick<DbSchema, 'id' | 'name' | 'schema'> | null;
  j_provider: DbProvider | null;
  j_mcp: McpEntry[] | null;
  /** At every step (the other joins only before the plan is pinned): budgets are read live. */
  j_budgets: RunBudgets | null;
};

/** What `pinPlan` writes on a run that has no plan yet. */
export interface PlanPin {
  plan: object;
  promptVersionId: string;
  /** The version of the agent the plan was resolved from (`agents.version` as the turn read it). */
  agentVersion: number | null;
  /** Every warning of the run: the ones it had and the plan's. */
  warnings: string[];
  /** The tools, when they are known at start (no MCP servers to list). */
  tools?: object;
}

/** How a turn ends on its run row. */
export interface RunClose {
  status: 'completed' | 'failed';
  output: DbRun['output'];
  toolCalls: Array<Record<string, unknown>>;
  error: TurnError | undefined;
}

/**
 * The runs row as a session turn moves it along: started (plan pinned),
 * tools listed, paused for approval, resumed, closed. Knex only; the rules
 * are in activities/session/. Writes of several statements take the
 * caller's transaction.
 */
export class TurnsRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(fn);
  }

  /**
   * The run with, in the same statement, everything its turn resolves at
   * start (agent, conversation context, project key, model, prompt version
   * by label, schema) and the provider of the model it calls: one round trip
   * on the turn's critical path instead of one per table. The run's
   * `overrides` name the model and prompt version instead, when they do.
   * `j_model.provider_id` is the provider that serves the model: its own, or
   * the only provider of its type when it names none.
   */
  async startRow(runId: string): Promise<TurnStartRow | undefined> {
    const { rows } = await this.db.raw<{ rows: TurnStartRow[] }>(
      `select r.*,
              to_jsonb(a) as j_agent,
              c.id as j_conversation_id, c.context as j_context,
              p.virtual_key_id as j_virtual_key_id,
              to_jsonb(m) || jsonb_build_object('provider_id', mp.id) as j_model,
              (select jsonb_build_object('id', v.id, 'version', v.version, 'template', v.template)
                 from prompt_versions v
                where a.id is not null
                  and v.id = coalesce((r.overrides->>'prompt_version_id')::uuid,
                                      (select l.version_id from prompt_labels l
                                        where l.prompt_id = a.prompt_id and l.label = a.prompt_label))) as j_prompt,
              (select jsonb_build_object('id', s.id, 'name', s.name, 'schema', s.schema)
                 from schemas s where s.id = a.schema_id) as j_schema,
              to_jsonb(pr) as j_provider,
              (select jsonb_agg(jsonb_build_object('mcp_server_id', e.mcp_server_id, 'tool_filters', e.tool_filters,
                                                   'tools_requiring_approval', e.tools_requiring_approval) order by e.position)
                 from agent_mcp_servers e where e.agent_id = a.id) as j_mcp,
              ${RUN_BUDGETS_SQL} as j_budgets
         from runs r
         left join agents a on a.id = r.agent_id and r.plan is null
         left join conversations c on c.pk = r.conversation_pk and r.plan is null
         left join projects p on p.id = r.project_id and r.plan is null
         left join models m on m.id = coalesce((r.overrides->>'model_id')::uuid, a.model_id) and a.id is not null
         -- A model naming no provider is served by the only provider of its type, while there is one.
         left join lateral (
           select coalesce(m.provider_id,
                           (select (array_agg(o.id))[1] from providers o
                             where o.provider_type = m.provider_type having count(*) = 1)) as id
         ) mp on true
         left join providers pr on pr.id = coalesce((r.plan->'model'->>'provider_id')::uuid, mp.id)
        where r.id = ?`,
      [runId],
    );
    return rows[0];
  }

  /** Pins the plan and marks the run running; false when the run already has a plan. */
  async pinPlan(runId: string, pin: PlanPin): Promise<boolean> {
    const updated = await this.db(RunsTableName)
      .where({ id: runId })
      .whereNull('plan')
      .update({
        plan: JSON.stringify(pin.plan),
        status: 'running',
        started_at: this.db.fn.now(),
        prompt_version_id: pin.promptVersionId,
        agent_version: pin.agentVersion,
        warnings: JSON.stringify(pin.warnings),
        ...(pin.tools ? { tools: JSON.stringify(pin.tools) } : {}),
      });
    return updated > 0;
  }

  /** Records the turn's tools and adds `warnings` to the run's; a run that has its tools keeps them. */
  async recordTools(runId: string, tools: object, warnings: string[]): Promise<void> {
    await this.db(RunsTableName)
      .where({ id: runId })
      .whereNull('tools')
      .update({
        tools: JSON.stringify(tools),
        warnings: this.db.raw(`warnings || ?::jsonb`, [JSON.stringify(warnings)]),
      });
  }

  /** The run, locked until the transaction ends. */
  async lock(runId: string, trx: Knex.Transaction): Promise<DbRun | undefined> {
    return trx(RunsTableName).where({ id: runId }).forUpdate().first();
  }

  async close(runId: string, close: RunClose, trx: Conn = this.db): Promise<void> {
    await trx(RunsTableName)
      .where({ id: runId })
      .update({
        status: close.status,
        output: close.output ? JSON.stringify(close.output) : null,
        tool_calls: JSON.stringify(close.toolCalls),
        error: close.error ? JSON.stringify(close.error) : null,
        pause: null,
        finished_at: trx.fn.now(),
      });
  }

  async pause(runId: string, pending: Array<Record<string, unknown>>, trx: Conn = this.db): Promise<void> {
    await trx(RunsTableName)
      .where({ id: runId })
      .update({ status: 'awaiting_approval', pending_approvals: JSON.stringify(pending) });
  }

  /** The run waits for something other than approval (budget, a decision, authorization, input): its status and `pause`. */
  async wait(
    runId: string,
    status: 'awaiting_budget' | 'awaiting_decision' | 'awaiting_authorization' | 'awaiting_input',
    pause: StoredRunPause,
    trx: Conn = this.db,
  ): Promise<void> {
    await trx(RunsTableName)
      .where({ id: runId })
      .update({ status, pause: JSON.stringify(pause) });
  }

  /** The run's wait has ended: running again. */
  async endWait(runId: string, trx: Conn = this.db): Promise<void> {
    await trx(RunsTableName).where({ id: runId }).update({ status: 'running', pause: null });
  }

  /**
   * Tool calls waiting for a decision across the installation (the pending-
   * approvals gauge): the partial index runs_awaiting_index holds only paused runs.
   */
  async pendingApprovalCount(): Promise<number> {
    const { rows } = await this.db.raw<{ rows: Array<{ n: number | null }> }>(
      `select sum(coalesce(jsonb_array_length(pending_approvals), 0))::int as n
         from runs where status = 'awaiting_approval'`,
    );
    return rows[0]?.n ?? 0;
  }

  /**
   * Stores the run's approvals and what still waits; `pending` null means
   * nothing does: the run is running again.
   */
  async setApprovals(
    runId: string,
    approvals: Array<Record<string, unknown>>,
    pending: Array<Record<string, unknown>> | null,
    trx: Conn = this.db,
  ): Promise<void> {
    await trx(RunsTableName)
      .where({ id: runId })
      .update({
        approvals: JSON.stringify(approvals),
        ...(pending === null
          ? { status: 'running', pending_approvals: null }
          : { pending_approvals: JSON.stringify(pending) }),
      });
  }
}
