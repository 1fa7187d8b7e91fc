/**
 * Shapes the repositories take and return that the API's schemas also name.
 * They live here, below both, so that repositories never import the API;
 * the API's schema modules re-export them.
 */

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

/** Labels an agent may refer to. `latest` follows the newest version by itself. */
export const PROMPT_LABELS = ['production', 'latest'] as const;
export type PromptLabel = (typeof PROMPT_LABELS)[number];

/** What a virtual key grants: a provider and the models of it (`*` for all). */
export interface Grant {
  provider_id: string;
  model_names: string[];
}

/** A list filter of conversations. */
export interface ConversationFilter {
  namespace?: string;
  agent_id?: string;
}

export const MESSAGE_ROLES = ['user', 'assistant', 'tool', 'system'] as const;

/** A message of a thread as the API shows it. */
export interface Message {
  id: string;
  thread_id: string;
  role: (typeof MESSAGE_ROLES)[number];
  content: unknown;
  tool_calls?: unknown;
  tool_call_id?: string;
  usage?: unknown;
  created_at: string;
}

export const SUMMARIZER_TYPES = ['llm', 'sliding_window', 'none'] as const;
export type SummarizerType = (typeof SUMMARIZER_TYPES)[number];

/** One MCP server of an agent, with the tools it offers and those that need approval. */
export interface McpEntry {
  mcp_server_id: string;
  tool_filters: string[];
  tools_requiring_approval: string[];
}

/** An agent's sandbox settings. */
export interface SandboxSettings {
  enabled: boolean;
  docker_image?: string | null;
  require_approval: boolean;
}
