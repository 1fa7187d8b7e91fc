import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { AgentVersionsTableName, type DbAgentVersion } from '../db/tables/index.js';
import type { Page } from './types.js';

type Conn = Db | Knex.Transaction;

/** Which versions of an agent a list returns: a page, and optionally those whose metadata contains this. */
export interface VersionFilter extends Page {
  metadata?: Record<string, unknown>;
}

/**
 * An agent's versions: each write of the agent adds one (its settings as a
 * whole), never changed afterwards. Knex only; which one is in force is
 * `agents.version`, set by the service.
 */
export class AgentVersionsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Adds the agent's next version (after its highest, whichever is in
   * force) and returns its number. The caller holds the agent's row lock,
   * so two writes cannot take the same number.
   */
  async add(trx: Knex.Transaction, agentId: string, snapshot: object): Promise<number> {
    const top = await trx(AgentVersionsTableName)
      .where({ agent_id: agentId })
      .max<{ max: number | null }>('version as max')
      .first();
    const version = (top?.max ?? 0) + 1;
    await trx(AgentVersionsTableName).insert({
      agent_id: agentId,
      version,
      snapshot: JSON.stringify(snapshot),
    });
    return version;
  }

  /** Newest first. */
  async list(agentId: string, filter: VersionFilter, conn: Conn = this.db): Promise<DbAgentVersion[]> {
    const q = conn(AgentVersionsTableName).where({ agent_id: agentId });
    if (filter.metadata && Object.keys(filter.metadata).length > 0)
      void q.whereRaw(`snapshot->'metadata' @> ?::jsonb`, [JSON.stringify(filter.metadata)]);
    return q.orderBy('version', 'desc').limit(filter.limit).offset(filter.offset);
  }

  async find(agentId: string, version: number, conn: Conn = this.db): Promise<DbAgentVersion | undefined> {
    return conn(AgentVersionsTableName).where({ agent_id: agentId, version }).first();
  }
}
