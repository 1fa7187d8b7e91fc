/**
 * Runs of sub-agents: an agent's turn calling another agent of its project
 * as a tool runs that agent's turn in a conversation of its own, linked to
 * the calling run (`runs.parent_run_id`) and counting against the callers'
 * budgets too (`runs.budget_scopes`).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import type { ScopeBudget } from '../budgets/types.js';

/** A budget a run's spend counts against beside its own agent's and conversation's. */
export interface InheritedScope {
  scope: 'agent' | 'conversation';
  /** The agent's id, or the conversation's pk. */
  scope_id: string;
}

/** A run a sub-agent call started, as its parent's view lists it. */
export interface SubAgentRunRow {
  run_id: string;
  agent_id: string | null;
  agent_name: string | null;
  conversation_id: string;
  status: string;
  created_at: Date;
  finished_at: Date | null;
}

/** The calling run, as a sub-agent call reads it. */
export interface ParentRunRow {
  id: string;
  project_id: string;
  agent_id: string | null;
  conversation_pk: string;
  trace_id: string | null;
  status: string;
  tools: Record<string, unknown> | null;
  budget_scopes: InheritedScope[];
  thread_id: string;
  /** The conversation's context, which the sub-agent's conversation starts with. */
  context: Record<string, unknown> | null;
  /** The person the calling turn acts for: the sub-agent's turn acts for them too (per-user MCP authorization). */
  end_user_id: string | null;
}

export class SubAgentsRepository {
  constructor(private readonly db: Db) {}

  /** The project's agents among `ids` (others, and deleted ones, are not there). */
  async agents(
    projectId: string,
    ids: string[],
  ): Promise<Array<{ id: string; name: string; description: string | null }>> {
    if (!ids.length) return [];
    return this.db('agents')
      .where('project_id', projectId)
      .whereIn('id', ids)
      .select('id', 'name', 'description');
  }

  /** How many sub-agent calls above this run (0: a run a client started). */
  async depth(runId: string): Promise<number> {
    const { rows } = await this.db.raw<{ rows: Array<{ depth: number }> }>(
      `with recursive up(id, parent, depth) as (
         select id, parent_run_id, 0 from runs where id = ?
         union all
         select r.id, r.parent_run_id, up.depth + 1 from runs r join up on r.id = up.parent where up.depth < 100
       )
       select max(depth)::int as depth from up`,
      [runId],
    );
    return rows[0]?.depth ?? 0;
  }

  /** The calling run with its conversation's context. */
  async parent(runId: string): Promise<ParentRunRow | undefined> {
    return this.db('runs as r')
      .join('conversations as c', 'c.pk', 'r.conversation_pk')
      .where('r.id', runId)
      .first(
        'r.id',
        'r.project_id',
        'r.agent_id',
        'r.conversation_pk',
        'r.trace_id',
        'r.status',
        'r.tools',
        'r.budget_scopes',
        'r.end_user_id',
        'r.thread_id',
        'c.context',
      );
  }

  /**
   * Links a sub-agent's run to the run that called it, with the budgets it
   * counts against; before it is delivered, so its first model call sees them.
   */
  async link(runId: string, parentRunId: string, scopes: InheritedScope[]): Promise<void> {
    await this.db('runs')
      .where('id', runId)
      .update({ parent_run_id: parentRunId, budget_scopes: JSON.stringify(scopes) });
  }

  /** The runs a run's sub-agent calls started, oldest first. */
  async children(runId: string, q: Knex = this.db): Promise<SubAgentRunRow[]> {
    return q('runs as r')
      .join('conversations as c', 'c.pk', 'r.conversation_pk')
      .leftJoin('agents as a', 'a.id', 'r.agent_id')
      .where('r.parent_run_id', runId)
      .orderBy([{ column: 'r.created_at' }, { column: 'r.id' }])
      .select(
        'r.id as run_id',
        'r.agent_id',
        'a.name as agent_name',
        'c.id as conversation_id',
        'r.status',
        'r.created_at',
        'r.finished_at',
      );
  }

  /** The budgets of inherited scopes as they are now (read at each model call: a raise applies to the next). */
  async budgets(scopes: InheritedScope[]): Promise<Array<InheritedScope & { budget: ScopeBudget }>> {
    const agentIds = scopes.filter((s) => s.scope === 'agent').map((s) => s.scope_id);
    const conversationPks = scopes.filter((s) => s.scope === 'conversation').map((s) => s.scope_id);
    const [agents, conversations] = await Promise.all([
      agentIds.length
        ? this.db('agents').whereIn('id', agentIds).whereNotNull('budget').select('id', 'budget')
        : [],
      conversationPks.length
        ? this.db('conversations')
            .whereIn('pk', conversationPks)
            .whereNotNull('budget')
            .select('pk as id', 'budget')
        : [],
    ]);
    const byId = new Map<string, ScopeBudget>();
    for (const row of [...agents, ...conversations] as Array<{ id: string; budget: ScopeBudget }>)
      byId.set(row.id, row.budget);
    return scopes.flatMap((s) => {
      const budget = byId.get(s.scope_id);
      return budget ? [{ ...s, budget }] : [];
    });
  }
}
