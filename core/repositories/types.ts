/**
 * Shapes the repositories take and return that the API's schemas also name.
 * They live here, below both, so that repositories never import the API;
 * the API's schema modules re-export them. Those that are a column's values
 * are defined with their table (core/db/tables/).
 */
import type { DbAgentMcpServer, DbVirtualKeyGrant, MessageRole } from '../db/tables/index.js';

export {
  MESSAGE_ROLES,
  PROMPT_LABELS,
  SUMMARIZER_TYPES,
  type AgentExposure,
  type PromptLabel,
  type SandboxSettings,
  type SubAgentEntry,
  type SummarizerType,
} from '../db/tables/index.js';

/** A page of a list: `limit` and `offset` as validated by the API. */
export interface Page {
  limit: number;
  offset: number;
}

/** Something that still refers to a row being deleted (a 409 names each one). */
export interface Referrer {
  type: string;
  id: string;
  name?: string;
}

/** What a virtual key grants: a provider and the models of it (`*` for all). */
export type Grant = Pick<DbVirtualKeyGrant, 'provider_id' | 'model_names'>;

/** A list filter of conversations. */
export interface ConversationFilter {
  namespace?: string;
  agent_id?: string;
}

/** A message of a thread as the API shows it. */
export interface Message {
  id: string;
  thread_id: string;
  role: MessageRole;
  content: unknown;
  tool_calls?: unknown;
  tool_call_id?: string;
  usage?: unknown;
  created_at: string;
}

/** One MCP server of an agent, with the tools it offers and those that need approval. */
export type McpEntry = Pick<DbAgentMcpServer, 'mcp_server_id' | 'tool_filters' | 'tools_requiring_approval'>;
