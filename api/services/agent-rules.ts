/**
 * An agent's settings as a whole: their defaults, the rules across fields
 * and references that every write (create, update, pin of a version) checks,
 * and the snapshot a version stores.
 */
import type { Knex } from 'knex';
import { ValidationError, type FieldError } from '../../core/errors.js';
import type { DbAgentWrite } from '../../core/db/tables/index.js';
import { defaultPrice } from '../../core/metering/pricing.js';
import type { AgentsRepository, AgentWithServers } from '../../core/repositories/agents.repository.js';
import { subAgentProblems } from './sub-agent-rules.js';
import type { McpEntry, PromptLabel, SandboxSettings } from '../schemas/agents.schemas.js';

/** An agent's whole configuration after defaults: what gets validated, stored, and snapshotted as a version. */
export type AgentState = Omit<DbAgentWrite, 'project_id' | 'version' | 'id'> & { mcp_servers: McpEntry[] };

export const AGENT_DEFAULTS: Omit<AgentState, 'name' | 'model_id' | 'prompt_id'> = {
  description: null,
  prompt_label: 'latest',
  schema_id: null,
  enable_history: true,
  summarizer_type: 'none',
  llm_summarizer_token_threshold: null,
  llm_summarizer_keep_recent_count: null,
  llm_summarizer_prompt_id: null,
  llm_summarizer_prompt_label: null,
  llm_summarizer_model_id: null,
  sliding_window_keep_count: null,
  sandbox: { enabled: false, docker_image: null, require_approval: false },
  max_iterations: 20,
  approval_timeout_ms: null,
  budget: null,
  budget_wait_timeout_ms: null,
  non_idempotent_tools: [],
  decision_timeout_ms: null,
  input_timeout_ms: null,
  authorization_timeout_ms: null,
  metadata: {},
  config: {},
  context: {},
  graph_id: null,
  memory_tools: false,
  expose: { mcp: false, a2a: false },
  sub_agents: [],
  a2a_agents: [],
  mcp_servers: [],
};

export function normalizeAgent(state: AgentState): AgentState {
  const sandbox: SandboxSettings = {
    ...state.sandbox,
    docker_image: state.sandbox.docker_image ?? null,
    require_approval: state.sandbox.require_approval ?? false,
  };
  return { ...state, summarizer_type: state.summarizer_type ?? 'none', sandbox };
}

/** A stored agent's settings (or a version's snapshot) as a whole, defaults under what it has. */
export function agentState(from: Partial<AgentWithServers> | Record<string, unknown>): AgentState {
  const picked = Object.fromEntries(
    Object.keys(AGENT_DEFAULTS)
      .concat('name', 'model_id', 'prompt_id')
      .filter((k) => (from as Record<string, unknown>)[k] !== undefined)
      .map((k) => [k, (from as Record<string, unknown>)[k]]),
  );
  return normalizeAgent({ ...AGENT_DEFAULTS, ...picked } as AgentState);
}

/** The row an agent's write stores: its settings, project and the version in force. */
export function agentRow(projectId: string, a: AgentState, version: number): DbAgentWrite {
  const { mcp_servers: _servers, ...rest } = a;
  return {
    ...rest,
    project_id: projectId,
    version,
    sandbox: JSON.stringify(a.sandbox) as unknown as SandboxSettings,
  };
}

/**
 * Cross-field rules and every reference, all problems reported at once
 * (400, each naming its field): a version pinned later is checked the same
 * way, so one naming a model or prompt deleted since is refused.
 */
export async function validateAgent(
  conn: Knex.Transaction,
  repo: AgentsRepository,
  projectId: string,
  a: AgentState,
  selfId?: string,
): Promise<void> {
  const problems: FieldError[] = [];
  const need = (field: string, message: string) => problems.push({ field, message, type: 'any.required' });
  if (a.summarizer_type === 'llm') {
    if (!a.llm_summarizer_token_threshold)
      need(
        'llm_summarizer_token_threshold',
        'llm_summarizer_token_threshold (> 0) is required when summarizer_type is llm',
      );
    if (!a.llm_summarizer_keep_recent_count)
      need(
        'llm_summarizer_keep_recent_count',
        'llm_summarizer_keep_recent_count (>= 1) is required when summarizer_type is llm',
      );
    if (!a.llm_summarizer_prompt_id)
      need('llm_summarizer_prompt_id', 'llm_summarizer_prompt_id is required when summarizer_type is llm');
  }
  if (a.summarizer_type === 'sliding_window' && !a.sliding_window_keep_count) {
    need(
      'sliding_window_keep_count',
      'sliding_window_keep_count (>= 1) is required when summarizer_type is sliding_window',
    );
  }

  const exists = async (table: string, id: string) =>
    Boolean(await conn(table).where({ id, project_id: projectId }).first('id'));
  const ref = async (field: string, table: string, what: string, id: string | null | undefined) => {
    if (id && !(await exists(table, id))) {
      problems.push({
        field,
        message: `${field} does not name an existing ${what} in this project`,
        type: 'any.reference',
      });
      return false;
    }
    return Boolean(id);
  };
  const labelled = async (field: string, promptId: string, label: PromptLabel) => {
    if (!(await repo.promptHasLabel(conn, promptId, label))) {
      problems.push({
        field,
        message: `the prompt has no version labelled ${label}`,
        type: 'any.reference',
      });
    }
  };

  if ((await ref('model_id', 'models', 'model', a.model_id)) && a.budget) {
    const model = await conn('models').where({ id: a.model_id }).first('model_id', 'pricing');
    if (model && !model.pricing && !defaultPrice(model.model_id))
      problems.push({
        field: 'budget',
        message: `a budget needs a price for the agent's model: no price is known for "${model.model_id}"; set pricing on the model`,
        type: 'any.invalid',
      });
  }
  if (await ref('prompt_id', 'prompts', 'prompt', a.prompt_id))
    await labelled('prompt_label', a.prompt_id, a.prompt_label);
  await ref('schema_id', 'schemas', 'schema', a.schema_id);
  if (await ref('llm_summarizer_prompt_id', 'prompts', 'prompt', a.llm_summarizer_prompt_id)) {
    await labelled(
      'llm_summarizer_prompt_label',
      a.llm_summarizer_prompt_id!,
      a.llm_summarizer_prompt_label ?? 'latest',
    );
  }
  await ref('llm_summarizer_model_id', 'models', 'model', a.llm_summarizer_model_id);
  for (const [i, entry] of a.mcp_servers.entries()) {
    await ref(`mcp_servers.${i}.mcp_server_id`, 'mcp_servers', 'MCP server', entry.mcp_server_id);
  }
  for (const [i, entry] of a.a2a_agents.entries()) {
    await ref(`a2a_agents.${i}.a2a_agent_id`, 'a2a_agents', 'A2A agent', entry.a2a_agent_id);
  }
  problems.push(...(await subAgentProblems(conn, projectId, selfId, a.sub_agents)));
  if (problems.length > 0) throw new ValidationError(problems);
}
