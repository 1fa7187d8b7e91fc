import type { Knex } from 'knex';
import type { JsonText } from './columns.js';

export const AgentVersionsTableName = 'agent_versions';

/**
 * One version of an agent: every setting it had after a write, as a whole
 * (`snapshot`: the agent's settings and its MCP servers), written once.
 * `agents.version` says which one is in force.
 */
export type DbAgentVersion = {
  agent_id: string;
  version: number;
  snapshot: Record<string, unknown>;
  created_at: Date;
};
export type DbAgentVersionInsert = Pick<DbAgentVersion, 'agent_id' | 'version'> & { snapshot: JsonText };

export type AgentVersionsTable = Knex.CompositeTableType<DbAgentVersion, DbAgentVersionInsert, never>;

declare module 'knex/types/tables.js' {
  interface Tables {
    agent_versions: AgentVersionsTable;
  }
}
