/**
 * What the session's activities share: the dependencies they close over and
 * the plan a turn pins on its run at its first model call.
 */
import type { Config } from '../../core/config.js';
import type { SecretBox } from '../../core/crypto/secrets.js';
import type { Db } from '../../core/db/knex.js';
import type { Logger } from '../../core/logger.js';
import type { GatewayPolicyService } from '../../core/metering/gateway-policy.js';
import type { SandboxManager } from '../sandbox/sandbox-manager.js';
import type { SkillSummary } from '../skills/skills.js';
import type { AgentMcpEntry } from '../tools/mcp-tools.js';
import type { SummarizerType } from './context.js';
import type { SubAgentOffer } from './sub-agents.js';
import type { A2aAgentEntry } from '../../core/db/tables/index.js';

export interface SessionDeps {
  config: Config;
  db: Db;
  logger: Logger;
  secrets: SecretBox;
  policy: GatewayPolicyService;
  /** The session sandboxes (execute_bash_commands); absent or disabled: the tool is not offered. */
  sandbox?: SandboxManager;
}

export interface PlanModel {
  id: string;
  model_id: string;
  provider_id: string;
  parameters: Record<string, unknown>;
}

/** Everything a turn resolved at its start, pinned on the run row (not in workflow history). */
export interface TurnPlan {
  project_id: string;
  agent_id: string;
  agent_name: string;
  conversation_id: string;
  thread_id: string;
  max_iterations: number;
  enable_history: boolean;
  summarizer_type: SummarizerType;
  sliding_window_keep_count: number | null;
  llm_summarizer_token_threshold: number | null;
  llm_summarizer_keep_recent_count: number | null;
  model: PlanModel;
  prompt_version_id: string;
  prompt_version: number;
  system: string;
  schema: { id: string; name: string; schema: Record<string, unknown> } | null;
  summarizer: { prompt_version_id: string | null; system: string; model: PlanModel } | null;
  virtual_key_id: string | null;
  /** The agent asks for the sandbox and this server has one: execute_bash_commands is offered. */
  sandbox_enabled: boolean;
  /** The agent asks for the sandbox (whether or not the server has one). */
  sandbox_requested: boolean;
  sandbox_image: string | null;
  sandbox_require_approval: boolean;
  mcp_servers: AgentMcpEntry[];
  approval_timeout_ms: number | null;
  /** MCP tools (as offered: `server__tool`) whose call is not repeated blindly (absent on plans pinned before). */
  non_idempotent_tools?: string[];
  /** An undecided call of one of them fails after this long (null: it waits). */
  decision_timeout_ms?: number | null;
  /** A question an MCP server asks is declined after this long (null or absent: 24 hours). */
  input_timeout_ms?: number | null;
  /** A call waiting for an MCP server's authorization fails after this long (null or absent: 24 hours). */
  authorization_timeout_ms?: number | null;
  /** The agent's memory tools (memory_save, memory_search) are offered (absent on plans pinned before). */
  memory_tools?: boolean;
  /** Skills listed in the system prompt (sandbox agents only). */
  skills: SkillSummary[];
  /** The agents it may call as tools, and the limits (absent: none; and on plans pinned before). */
  sub_agents?: SubAgentOffer;
  /** The remote A2A agents it may call as tools (absent on plans pinned before). */
  a2a_agents?: A2aAgentEntry[];
}
