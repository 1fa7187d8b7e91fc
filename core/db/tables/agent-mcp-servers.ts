import type { Knex } from 'knex';
import type { JsonText } from './columns.js';

export const AgentMcpServersTableName = 'agent_mcp_servers';

/** One MCP server of an agent, in the agent's order. */
export type DbAgentMcpServer = {
  agent_id: string;
  mcp_server_id: string;
  /** Tool names the agent is offered (empty: all of the server's). */
  tool_filters: string[];
  tools_requiring_approval: string[];
  position: number;
};
/** What a write sends: the lists as JSON text. */
export type DbAgentMcpServerInsert = {
  agent_id: string;
  mcp_server_id: string;
  tool_filters?: JsonText;
  tools_requiring_approval?: JsonText;
  position?: number;
};
export type DbAgentMcpServerUpdate = Partial<DbAgentMcpServerInsert>;

export type AgentMcpServersTable = Knex.CompositeTableType<
  DbAgentMcpServer,
  DbAgentMcpServerInsert,
  DbAgentMcpServerUpdate
>;
