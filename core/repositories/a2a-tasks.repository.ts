import type { Db } from '../db/knex.js';
import { STATUS_TIME_SQL } from './runs.repository.js';
import {
  AgentsTableName,
  MessagesTableName,
  RunEventsTableName,
  RunsTableName,
  type RunStatus,
} from '../db/tables/index.js';

/** An agent as its A2A card and door need it. */
export interface A2aAgentRow {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  version: number;
}

/** The runs of one agent an A2A ListTasks asks for. */
export interface A2aTaskFilter {
  projectId: string;
  agentId: string;
  conversationPk?: string;
  statuses?: RunStatus[];
  /** Status timestamp after this: see RunFilter.statusAfter. */
  statusAfter?: Date;
}

/**
 * What the A2A door reads beside the run views (RunsRepository): the agent
 * it serves, each task's user message, and how many tasks a list has.
 */
export class A2aTasksRepository {
  constructor(readonly db: Db) {}

  /** The agent, when it exists and is served as an A2A agent (`expose.a2a`). */
  async exposedAgent(agentId: string): Promise<A2aAgentRow | undefined> {
    return this.db(AgentsTableName)
      .where({ id: agentId })
      .whereRaw(`coalesce((expose->>'a2a')::boolean, false)`)
      .first('id', 'project_id', 'name', 'description', 'version');
  }

  /** The user message each run answers (its converse message), by run id. */
  async userMessages(runIds: string[]): Promise<Map<string, unknown>> {
    if (!runIds.length) return new Map();
    const rows = await this.db(MessagesTableName)
      .whereIn('run_id', runIds)
      .where({ role: 'user', step_key: 'user' })
      .select<Array<{ run_id: string; content: unknown }>>('run_id', 'content');
    return new Map(rows.map((r) => [r.run_id, r.content]));
  }

  /**
   * Why the run last waited, when that wait has ended (its last pause or
   * resume is `run.resumed`); undefined when it never waited or waits now.
   */
  async endedWait(runId: string): Promise<string | undefined> {
    const last = await this.db(RunEventsTableName)
      .where({ run_id: runId })
      .whereIn('type', ['run.paused', 'run.resumed'])
      .orderBy('seq', 'desc')
      .first<{ type: string; data: { reason?: unknown } } | undefined>('type', 'data');
    return last?.type === 'run.resumed' && typeof last.data.reason === 'string'
      ? last.data.reason
      : undefined;
  }

  /** How many runs match (ListTasks' totalSize). */
  async count(filter: A2aTaskFilter): Promise<number> {
    const q = this.db(`${RunsTableName} as r`)
      .where({ project_id: filter.projectId, agent_id: filter.agentId })
      .count<Array<{ n: string }>>({ n: '*' });
    if (filter.conversationPk !== undefined) q.where('conversation_pk', filter.conversationPk);
    if (filter.statuses?.length) q.whereIn('status', filter.statuses);
    if (filter.statusAfter) q.whereRaw(`${STATUS_TIME_SQL} > ?`, [filter.statusAfter]);
    const [row] = await q;
    return Number(row?.n ?? 0);
  }
}
