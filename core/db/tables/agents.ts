import type { Knex } from 'knex';
import type { JsonText, Timestamp } from './columns.js';
import type { ScopeBudget } from '../../budgets/types.js';
import type { PromptLabel } from './prompt-labels.js';

export const AgentsTableName = 'agents';

export const SUMMARIZER_TYPES = ['llm', 'sliding_window', 'none'] as const;
export type SummarizerType = (typeof SUMMARIZER_TYPES)[number];

/** An agent's sandbox settings (the `sandbox` jsonb). */
export type SandboxSettings = {
  enabled: boolean;
  docker_image?: string | null;
  require_approval: boolean;
};

/** Which doors other clients may call the agent through (the MCP server, A2A); both closed by default. */
/**
 * The doors other clients may call the agent through; `mcp_message`: what a
 * call through the MCP door without `message` sends (an agent whose work
 * needs no words: a report, a check), none by default.
 */
export type AgentExposure = { mcp: boolean; a2a: boolean; mcp_message?: string | null };

/** An agent of the same project this one may hand a task to: the model sees it as a tool. */
/** `requires_approval`: each call of this sub-agent waits for a person's approval, like an MCP tool's. */
export type SubAgentEntry = { agent_id: string; description?: string | null; requires_approval?: boolean };

/** A remote A2A agent (a2a_agents) this one may call: each skill a tool, filtered like an MCP server's. */
export type A2aAgentEntry = {
  a2a_agent_id: string;
  tool_filters: string[];
  tools_requiring_approval: string[];
};

export type DbAgent = {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  model_id: string;
  prompt_id: string;
  prompt_label: PromptLabel;
  schema_id: string | null;
  enable_history: boolean;
  summarizer_type: SummarizerType;
  llm_summarizer_token_threshold: number | null;
  llm_summarizer_keep_recent_count: number | null;
  llm_summarizer_prompt_id: string | null;
  llm_summarizer_prompt_label: PromptLabel | null;
  llm_summarizer_model_id: string | null;
  sliding_window_keep_count: number | null;
  sandbox: SandboxSettings;
  max_iterations: number;
  approval_timeout_ms: number | null;
  /** What the agent's turns may spend per period, beside the project's key; null: no limit. */
  budget: ScopeBudget | null;
  /** A run waiting for budget this long is cancelled; null: it waits for ever. */
  budget_wait_timeout_ms: number | null;
  /** MCP tools (`server__tool`) whose call is not repeated blindly after a worker died: a person decides. */
  non_idempotent_tools: string[];
  /** An undecided call of a non-idempotent tool fails after this long; null: it waits for ever. */
  decision_timeout_ms: number | null;
  /** A question an MCP server asked is declined after this long; null: 24 hours. */
  input_timeout_ms: number | null;
  /** A call waiting for an MCP server's authorization fails after this long; null: 24 hours. */
  authorization_timeout_ms: number | null;
  /** The version in force (agent_versions): the one pinned, or the latest write. */
  version: number;
  /** The caller's own labels (the Agent Protocol's assistant metadata). */
  metadata: Record<string, unknown>;
  /** The Agent Protocol's assistant `config`: stored and returned. */
  config: Record<string, unknown>;
  /** Template variables for the agent's prompts, defaults under the conversation's. */
  context: Record<string, unknown>;
  /** The agent this one was copied from (its graph, for the Agent Protocol); null when made through our API. */
  graph_id: string | null;
  /** The turn offers memory_save and memory_search over the project's memory store. */
  memory_tools: boolean;
  /** Served as a tool of the project's MCP server, and as an A2A agent. */
  expose: AgentExposure;
  /** The agents this one may call as tools, each in its own conversation. */
  sub_agents: SubAgentEntry[];
  /** The remote A2A agents this one may call as tools. */
  a2a_agents: A2aAgentEntry[];
  created_at: Date;
  updated_at: Date;
};
/** Every column an agent's writer sets (the API writes the whole agent). */
export type DbAgentWrite = Omit<DbAgent, 'created_at' | 'updated_at' | 'id'> & { id?: string };
/** Columns with a database default (or nullable) may be left out of an insert. */
export type DbAgentInsert = Pick<DbAgentWrite, 'project_id' | 'name' | 'model_id' | 'prompt_id'> &
  Partial<
    Omit<
      DbAgentWrite,
      | 'project_id'
      | 'name'
      | 'model_id'
      | 'prompt_id'
      | 'sandbox'
      | 'budget'
      | 'non_idempotent_tools'
      | 'expose'
      | 'sub_agents'
      | 'a2a_agents'
    >
  > & {
    sandbox?: SandboxSettings | JsonText;
    expose?: JsonText;
    sub_agents?: JsonText;
    a2a_agents?: JsonText;
    budget?: ScopeBudget | JsonText | null;
    non_idempotent_tools?: JsonText;
  };
export type DbAgentUpdate = Partial<DbAgentInsert> & { updated_at?: Timestamp };

export type AgentsTable = Knex.CompositeTableType<DbAgent, DbAgentInsert, DbAgentUpdate>;
