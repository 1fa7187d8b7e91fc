import type { Db } from '../db/knex.js';
import {
  A2aAgentsTableName,
  A2aTaskCallsTableName,
  AgentsTableName,
  type DbA2aAgent,
  type DbA2aAgentInsert,
  type DbA2aAgentUpdate,
  type DbA2aTaskCall,
} from '../db/tables/index.js';
import type { Page } from './types.js';

export class A2aAgentsRepository {
  constructor(private readonly db: Db) {}

  async insert(row: DbA2aAgentInsert): Promise<DbA2aAgent> {
    const [created] = await this.db(A2aAgentsTableName).insert(row).returning('*');
    return created!;
  }

  async list(projectId: string, page: Page): Promise<DbA2aAgent[]> {
    return this.db(A2aAgentsTableName)
      .where({ project_id: projectId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset);
  }

  async findById(id: string): Promise<DbA2aAgent | undefined> {
    return this.db(A2aAgentsTableName).where({ id }).first();
  }

  /** The project's agents among `ids` (a turn's listing). */
  async findMany(projectId: string, ids: string[]): Promise<DbA2aAgent[]> {
    if (ids.length === 0) return [];
    return this.db(A2aAgentsTableName).where({ project_id: projectId }).whereIn('id', ids);
  }

  async update(id: string, patch: DbA2aAgentUpdate): Promise<DbA2aAgent | undefined> {
    const [row] = await this.db(A2aAgentsTableName)
      .where({ id })
      .update({ ...patch, updated_at: this.db.fn.now() })
      .returning('*');
    return row;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db(A2aAgentsTableName).where({ id }).delete()) > 0;
  }

  /** Agents whose configuration lists this remote agent. */
  async referrers(id: string): Promise<Array<{ id: string; name: string }>> {
    return this.db(AgentsTableName)
      .whereRaw('a2a_agents @> ?::jsonb', [JSON.stringify([{ a2a_agent_id: id }])])
      .select('id', 'name')
      .orderBy('name');
  }

  /**
   * The call's row, written by the first attempt before it sends anything:
   * every later attempt reads the same message id (and the task, once known).
   */
  async claimCall(row: {
    run_id: string;
    call_key: string;
    a2a_agent_id: string;
    message_id: string;
  }): Promise<DbA2aTaskCall> {
    await this.db(A2aTaskCallsTableName).insert(row).onConflict(['run_id', 'call_key']).ignore();
    return (await this.db(A2aTaskCallsTableName)
      .where({ run_id: row.run_id, call_key: row.call_key })
      .first())!;
  }

  /** Remembers the remote task the call started (its first answer named it). */
  async rememberTask(runId: string, callKey: string, taskId: string, contextId: string): Promise<void> {
    await this.db(A2aTaskCallsTableName)
      .where({ run_id: runId, call_key: callKey })
      .update({ task_id: taskId, context_id: contextId || null, updated_at: this.db.fn.now() });
  }
}
