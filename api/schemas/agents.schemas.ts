import Joi from 'joi';
import type { ScopeBudget } from '../../core/budgets/types.js';
import { scopeBudget } from './budget.schemas.js';
import { context as templateContext } from './conversations.schemas.js';
import {
  description,
  idParams,
  matching,
  name,
  optionalProjectQuery,
  pagination,
  projectQuery,
  timestamp,
  uuid,
} from './common.schemas.js';

import { PROMPT_LABELS, SUMMARIZER_TYPES } from '../../core/repositories/types.js';
import type { A2aAgentEntry } from '../../core/db/tables/index.js';
import type {
  AgentExposure,
  McpEntry,
  PromptLabel,
  SandboxSettings,
  SubAgentEntry,
  SummarizerType,
} from '../../core/repositories/types.js';
// Defined in core (the repositories use them too); the API names them from here.
export {
  PROMPT_LABELS,
  SUMMARIZER_TYPES,
  type McpEntry,
  type PromptLabel,
  type SandboxSettings,
  type SummarizerType,
};

const label = Joi.string().valid(...PROMPT_LABELS);
const toolName = matching(
  /^[A-Za-z0-9_.\-/:]{1,128}$/,
  '1 to 128 characters of letters, digits and . _ - / : (a tool name)',
);
// A Docker/OCI image reference: [registry/]repo[:tag][@digest].
const imageRef = matching(
  /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::\d+)?(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/,
  'an image reference: lowercase [registry[:port]/]name[:tag][@sha256:digest], e.g. ghcr.io/acme/tools:1.2',
).max(512);

const mcpEntry = Joi.object({
  mcp_server_id: uuid.required(),
  tool_filters: Joi.array()
    .items(toolName)
    .max(500)
    .unique()
    .default([])
    .description('tool names offered to the model; empty = all'),
  tools_requiring_approval: Joi.array().items(toolName).max(500).unique().default([]),
});

const a2aEntry = Joi.object({
  a2a_agent_id: uuid.required(),
  tool_filters: Joi.array()
    .items(toolName)
    .max(500)
    .unique()
    .default([])
    .description('skill ids offered to the model ("delegate" for a card without skills); empty = all'),
  tools_requiring_approval: Joi.array()
    .items(toolName)
    .max(500)
    .unique()
    .default([])
    .description('skill ids whose call waits for approval'),
});

const expose = Joi.object({
  mcp: Joi.boolean()
    .default(false)
    .description("served as a tool of the project's MCP server (/api/mcp/{project_id})"),
  a2a: Joi.boolean().default(false).description('served as an A2A agent (/api/a2a/{agent_id})'),
  mcp_message: Joi.string()
    .min(1)
    .max(10_000)
    .allow(null)
    .description(
      'what a call through the MCP door without `message` sends (an agent whose work needs no words); ' +
        'absent: `message` is required',
    ),
}).description('the doors other clients may call this agent through; both closed by default');

const subAgent = Joi.object({
  agent_id: uuid.required(),
  description: Joi.string()
    .max(2_000)
    .allow(null)
    .description("what the model is told the sub-agent does (default: that agent's own description)"),
  requires_approval: Joi.boolean()
    .default(false)
    .description("each call waits for a person's approval (POST /runs/{id}/approvals), like an MCP tool's"),
});

const sandbox = Joi.object({
  enabled: Joi.boolean().required(),
  docker_image: imageRef.allow(null),
  require_approval: Joi.boolean().default(false),
});

/**
 * An integer field with its bounds: a value outside them is refused with the
 * bound in the message ("max_iterations must be at most 100"), never clamped.
 */
const bounded = (min: number, max: number) =>
  Joi.number().integer().min(min).max(max).messages({
    'number.min': '{#label} must be at least {#limit}',
    'number.max': '{#label} must be at most {#limit}',
  });

/** A free-form JSON object of the caller's (labels, the Agent Protocol's config), at most 64 KiB. */
const freeObject = Joi.object()
  .unknown(true)
  .custom((value: unknown, helpers) =>
    Buffer.byteLength(JSON.stringify(value)) > 65_536
      ? helpers.message({ custom: '{{#label}} must be at most 65536 bytes of JSON' })
      : value,
  );

const fields = {
  name,
  description,
  model_id: uuid,
  prompt_id: uuid,
  prompt_label: label,
  schema_id: uuid.allow(null),
  enable_history: Joi.boolean(),
  summarizer_type: Joi.string()
    .valid(...SUMMARIZER_TYPES)
    .allow(null),
  llm_summarizer_token_threshold: bounded(1, 100_000_000).allow(null),
  llm_summarizer_keep_recent_count: bounded(1, 10_000).allow(null),
  llm_summarizer_prompt_id: uuid.allow(null),
  llm_summarizer_prompt_label: label.allow(null),
  llm_summarizer_model_id: uuid.allow(null),
  sliding_window_keep_count: bounded(1, 10_000).allow(null),
  mcp_servers: Joi.array().items(mcpEntry).max(50).unique('mcp_server_id'),
  sandbox,
  max_iterations: bounded(1, 100),
  // 24 days: the column is a Postgres integer (at most 2^31 - 1 ms, 24.8 days); 30 days failed there.
  approval_timeout_ms: bounded(1_000, 24 * 24 * 3600 * 1000).allow(null),
  budget: scopeBudget,
  budget_wait_timeout_ms: bounded(1_000, 24 * 24 * 3600 * 1000)
    .allow(null)
    .description('a run waiting for budget this long is cancelled (null: it waits until the budget allows)'),
  non_idempotent_tools: Joi.array()
    .items(Joi.string().min(1).max(200))
    .max(200)
    .unique()
    .description(
      'MCP tools (as offered to the model: `server__tool`) whose call is not repeated blindly after a worker ' +
        'died mid-call: the run waits for a decision (POST /runs/{id}/decision)',
    ),
  decision_timeout_ms: bounded(1_000, 24 * 24 * 3600 * 1000)
    .allow(null)
    .description('an undecided call of a non-idempotent tool fails after this long (null: it waits)'),
  input_timeout_ms: bounded(1_000, 24 * 24 * 3600 * 1000)
    .allow(null)
    .description(
      'a question an MCP server asks during a tool call (POST /runs/{id}/input) is declined after this long (null: 24 hours)',
    ),
  authorization_timeout_ms: bounded(1_000, 24 * 24 * 3600 * 1000)
    .allow(null)
    .description(
      "a call waiting for an MCP server's OAuth authorization (POST /mcp-servers/{id}/authorize) fails after this long (null: 24 hours)",
    ),
  metadata: freeObject.description(
    'Your own labels for the agent (the Agent Protocol searches assistants by them)',
  ),
  config: freeObject.description(
    "The Agent Protocol's assistant `config` (tags, recursion_limit, configurable): stored and returned",
  ),
  context: templateContext.description(
    "Template variables for the agent's prompts: defaults under the conversation's context (which wins)",
  ),
  expose,
  sub_agents: Joi.array()
    .items(subAgent)
    .max(50)
    .unique('agent_id')
    .description(
      'other agents of the project the model may hand a task to, each seen as a tool; a call runs that ' +
        "agent's turn in a conversation of its own, linked to this run. A cycle is refused",
    ),
  a2a_agents: Joi.array()
    .items(a2aEntry)
    .max(50)
    .unique('a2a_agent_id')
    .description(
      'remote A2A agents (/a2a-agents) the model may call: a tool per skill (`<name>__<skill id>`), or ' +
        '`<name>__delegate` for a card without skills',
    ),
  memory_tools: Joi.boolean().description(
    "offer the tools memory_save and memory_search over the project's memory store (the Agent Protocol's " +
      '`/store`); memories default to the namespace ["memories", <agent id>]; default false',
  ),
};

export const agentCreate = {
  query: Joi.object(projectQuery),
  body: Joi.object({
    ...fields,
    name: name.required(),
    model_id: uuid.required(),
    prompt_id: uuid.required(),
  }).required(),
};
export const agentList = { query: Joi.object({ ...projectQuery, ...pagination }) };
export const agentGet = { params: idParams, query: Joi.object(optionalProjectQuery) };
export const agentByName = { query: Joi.object({ name: name.required(), ...optionalProjectQuery }) };
export const agentUpdate = {
  params: idParams,
  query: Joi.object(optionalProjectQuery),
  body: Joi.object(fields).min(1).required(),
};
export const agentDelete = agentGet;
/** A draft: any of the fields, none required; ids are looked up in the project, and ignored when they name nothing. */
export const agentCheck = {
  query: Joi.object(projectQuery),
  body: Joi.object(fields).required(),
};

export interface AgentFields {
  name: string;
  description?: string | null;
  model_id: string;
  prompt_id: string;
  prompt_label?: PromptLabel;
  schema_id?: string | null;
  enable_history?: boolean;
  summarizer_type?: SummarizerType | null;
  llm_summarizer_token_threshold?: number | null;
  llm_summarizer_keep_recent_count?: number | null;
  llm_summarizer_prompt_id?: string | null;
  llm_summarizer_prompt_label?: PromptLabel | null;
  llm_summarizer_model_id?: string | null;
  sliding_window_keep_count?: number | null;
  mcp_servers?: McpEntry[];
  sandbox?: SandboxSettings;
  max_iterations?: number;
  approval_timeout_ms?: number | null;
  budget?: ScopeBudget | null;
  budget_wait_timeout_ms?: number | null;
  non_idempotent_tools?: string[];
  decision_timeout_ms?: number | null;
  input_timeout_ms?: number | null;
  authorization_timeout_ms?: number | null;
  metadata?: Record<string, unknown>;
  config?: Record<string, unknown>;
  context?: Record<string, unknown>;
  memory_tools?: boolean;
  expose?: AgentExposure;
  sub_agents?: SubAgentEntry[];
  a2a_agents?: A2aAgentEntry[];
}
export type AgentUpdateBody = Partial<AgentFields>;

/** `GET /agents/{id}/versions` */
export const agentVersionList = {
  params: idParams,
  query: Joi.object({ ...optionalProjectQuery, ...pagination }),
};
/** `POST /agents/{id}/versions/{version}/pin` */
export const agentVersionPin = {
  params: Joi.object({
    id: uuid.required(),
    version: Joi.number().integer().min(1).max(2_147_483_647).required(),
  }),
  query: Joi.object(optionalProjectQuery),
};

export const agentResponse = Joi.object({
  id: uuid,
  project_id: uuid,
  name: Joi.string(),
  description: Joi.string().allow(null),
  model_id: uuid,
  prompt_id: uuid,
  prompt_label: label,
  schema_id: uuid.allow(null),
  enable_history: Joi.boolean(),
  summarizer_type: Joi.string().valid(...SUMMARIZER_TYPES),
  llm_summarizer_token_threshold: Joi.number().allow(null),
  llm_summarizer_keep_recent_count: Joi.number().allow(null),
  llm_summarizer_prompt_id: uuid.allow(null),
  llm_summarizer_prompt_label: label.allow(null),
  llm_summarizer_model_id: uuid.allow(null),
  sliding_window_keep_count: Joi.number().allow(null),
  mcp_servers: Joi.array().items(mcpEntry),
  sandbox,
  max_iterations: Joi.number(),
  approval_timeout_ms: Joi.number().allow(null),
  budget: scopeBudget,
  budget_wait_timeout_ms: Joi.number().allow(null),
  non_idempotent_tools: Joi.array().items(Joi.string()),
  decision_timeout_ms: Joi.number().allow(null),
  input_timeout_ms: Joi.number().allow(null),
  authorization_timeout_ms: Joi.number().allow(null),
  metadata: Joi.object().unknown(true),
  config: Joi.object().unknown(true),
  context: Joi.object().unknown(true),
  memory_tools: Joi.boolean(),
  expose,
  sub_agents: Joi.array().items(subAgent),
  a2a_agents: Joi.array().items(a2aEntry),
  graph_id: uuid
    .allow(null)
    .description(
      'The agent this one was copied from through the Agent Protocol (its graph); null for an agent made here',
    ),
  version: Joi.number()
    .integer()
    .description('The version in force (GET /agents/{id}/versions): the latest write, or the version pinned'),
  warnings: Joi.array()
    .items(Joi.string())
    .description(
      'configuration that is valid but will not work as asked, each naming its field: the sandbox on a server ' +
        "without one, a model no provider can serve or the project's virtual key does not grant, template " +
        "variables only a conversation's context can give a value",
    ),
  created_at: timestamp,
  updated_at: timestamp,
});
export const agentListResponse = Joi.array().items(agentResponse);

export const agentCheckResponse = Joi.object({
  warnings: Joi.array()
    .items(
      Joi.object({
        field: Joi.string().description('the field the warning is about, e.g. model_id, sandbox.enabled'),
        message: Joi.string().description("as the saved agent's `warnings` would say it"),
      }),
    )
    .description('what the saved agent would be warned about'),
});

export const agentVersionResponse = Joi.object({
  agent_id: uuid,
  version: Joi.number().integer(),
  in_force: Joi.boolean().description("Whether these are the agent's settings now"),
  settings: Joi.object()
    .unknown(true)
    .description(
      'Every setting the agent had after this write (as in the agent view), its MCP servers included',
    ),
  created_at: timestamp,
});
export const agentVersionListResponse = Joi.array().items(agentVersionResponse);
