import type { Agent, AgentBody, BudgetPeriod, PromptLabel } from '../../../api/types.js';
export type Num = number | string;

export interface SubAgentDraft {
  agent_id: string;
  description: string;
  /** Each call of this sub-agent waits for a person's approval. */
  requires_approval: boolean;
}

export interface McpDraft {
  mcp_server_id: string | null;
  tool_filters: string[];
  tools_requiring_approval: string[];
}

/** A remote A2A agent on the agent; the filters hold skill ids of its card. */
export interface A2aDraft {
  a2a_agent_id: string | null;
  tool_filters: string[];
  tools_requiring_approval: string[];
}

/** The agent form's state: every field of agent creation, as the inputs hold it. */
export interface AgentDraft {
  name: string;
  description: string;
  model_id: string | null;
  prompt_id: string | null;
  prompt_label: PromptLabel;
  schema_id: string | null;
  enable_history: boolean;
  max_iterations: Num;
  approval_timeout_ms: Num;
  summarizer_type: 'none' | 'llm' | 'sliding_window';
  llm_summarizer_token_threshold: Num;
  llm_summarizer_keep_recent_count: Num;
  llm_summarizer_prompt_id: string | null;
  llm_summarizer_prompt_label: PromptLabel | null;
  llm_summarizer_model_id: string | null;
  sliding_window_keep_count: Num;
  mcp_servers: McpDraft[];
  sandbox: { enabled: boolean; docker_image: string; require_approval: boolean };
  /** Empty amounts: no budget. */
  budget: { max_usd: Num; max_tokens: Num; period: BudgetPeriod; alert_at: Num };
  budget_wait_timeout_ms: Num;
  non_idempotent_tools: string[];
  decision_timeout_ms: Num;
  input_timeout_ms: Num;
  authorization_timeout_ms: Num;
  /** The turn offers memory_save / memory_search over the project's memory store. */
  memory_tools: boolean;
  /** Template variable defaults, as JSON text (empty: none). */
  context: string;
  /**
   * Served as a tool of the project's MCP server, and as an A2A agent;
   * mcp_message is what an MCP call without `message` sends (empty: none).
   */
  expose: { mcp: boolean; a2a: boolean; mcp_message: string };
  /** Other agents of the project the model may hand a task to; an empty description keeps theirs. */
  sub_agents: SubAgentDraft[];
  /** Remote A2A agents the model may call, a tool per skill. */
  a2a_agents: A2aDraft[];
}

const num = (v: number | null | undefined): Num => v ?? '';
const orNull = (v: Num): number | null => (v === '' ? null : Number(v));

export function draftOf(a?: Agent): AgentDraft {
  return {
    name: a?.name ?? '',
    description: a?.description ?? '',
    model_id: a?.model_id ?? null,
    prompt_id: a?.prompt_id ?? null,
    prompt_label: a?.prompt_label ?? 'latest',
    schema_id: a?.schema_id ?? null,
    enable_history: a?.enable_history ?? true,
    max_iterations: num(a?.max_iterations),
    approval_timeout_ms: num(a?.approval_timeout_ms),
    summarizer_type: a?.summarizer_type ?? 'none',
    llm_summarizer_token_threshold: num(a?.llm_summarizer_token_threshold),
    llm_summarizer_keep_recent_count: num(a?.llm_summarizer_keep_recent_count),
    llm_summarizer_prompt_id: a?.llm_summarizer_prompt_id ?? null,
    llm_summarizer_prompt_label: a?.llm_summarizer_prompt_label ?? null,
    llm_summarizer_model_id: a?.llm_summarizer_model_id ?? null,
    sliding_window_keep_count: num(a?.sliding_window_keep_count),
    mcp_servers: (a?.mcp_servers ?? []).map((m) => ({
      mcp_server_id: m.mcp_server_id ?? null,
      tool_filters: m.tool_filters ?? [],
      tools_requiring_approval: m.tools_requiring_approval ?? [],
    })),
    sandbox: {
      enabled: a?.sandbox?.enabled ?? false,
      docker_image: a?.sandbox?.docker_image ?? '',
      require_approval: a?.sandbox?.require_approval ?? false,
    },
    budget: {
      max_usd: num(a?.budget?.max_usd),
      max_tokens: num(a?.budget?.max_tokens),
      period: a?.budget?.period ?? 'month',
      alert_at: num(a?.budget?.alert_at),
    },
    budget_wait_timeout_ms: num(a?.budget_wait_timeout_ms),
    non_idempotent_tools: a?.non_idempotent_tools ?? [],
    decision_timeout_ms: num(a?.decision_timeout_ms),
    input_timeout_ms: num(a?.input_timeout_ms),
    authorization_timeout_ms: num(a?.authorization_timeout_ms),
    memory_tools: a?.memory_tools ?? false,
    context: a?.context && Object.keys(a.context).length ? JSON.stringify(a.context, null, 2) : '',
    expose: {
      mcp: a?.expose?.mcp ?? false,
      a2a: a?.expose?.a2a ?? false,
      mcp_message: a?.expose?.mcp_message ?? '',
    },
    sub_agents: (a?.sub_agents ?? []).map((s) => ({
      agent_id: s.agent_id,
      description: s.description ?? '',
      requires_approval: s.requires_approval ?? false,
    })),
    a2a_agents: (a?.a2a_agents ?? []).map((r) => ({
      a2a_agent_id: r.a2a_agent_id,
      tool_filters: r.tool_filters ?? [],
      tools_requiring_approval: r.tools_requiring_approval ?? [],
    })),
  };
}

/** Whether the context's text is JSON at all (its input says so on blur, and the form sends nothing until it is). */
export function contextParses(text: string): boolean {
  try {
    if (text.trim() !== '') JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The context as typed: empty is none; JSON that is not an object is sent
 * as it is, so the API's message for `context` shows under its input.
 */
function contextOf(text: string): AgentBody['context'] {
  if (text.trim() === '' || !contextParses(text)) return {};
  return JSON.parse(text) as AgentBody['context'];
}

/**
 * No budget when every amount is empty; else the budget as typed, a missing
 * max_usd sent as null so the API names it under its input.
 */
function budgetOf(b: AgentDraft['budget']): AgentBody['budget'] {
  if (b.max_usd === '' && b.max_tokens === '' && b.alert_at === '') return null;
  return {
    max_usd: orNull(b.max_usd) as number,
    max_tokens: orNull(b.max_tokens),
    period: b.period,
    alert_at: orNull(b.alert_at),
  };
}

/**
 * The request body: every field sent (so an edit can clear one), the
 * summarizer settings of the other summarizer types cleared, required
 * references passed through as they are (the API names the missing ones).
 */
export function bodyOf(d: AgentDraft): Partial<AgentBody> {
  const llm = d.summarizer_type === 'llm';
  const body: Partial<AgentBody> = {
    name: d.name.trim(),
    description: d.description.trim() === '' ? null : d.description,
    model_id: d.model_id ?? undefined,
    prompt_id: d.prompt_id ?? undefined,
    prompt_label: d.prompt_label,
    schema_id: d.schema_id,
    enable_history: d.enable_history,
    approval_timeout_ms: orNull(d.approval_timeout_ms),
    summarizer_type: d.summarizer_type,
    llm_summarizer_token_threshold: llm ? orNull(d.llm_summarizer_token_threshold) : null,
    llm_summarizer_keep_recent_count: llm ? orNull(d.llm_summarizer_keep_recent_count) : null,
    llm_summarizer_prompt_id: llm ? d.llm_summarizer_prompt_id : null,
    llm_summarizer_prompt_label: llm ? (d.llm_summarizer_prompt_label ?? 'latest') : null,
    llm_summarizer_model_id: llm ? d.llm_summarizer_model_id : null,
    sliding_window_keep_count:
      d.summarizer_type === 'sliding_window' ? orNull(d.sliding_window_keep_count) : null,
    mcp_servers: d.mcp_servers
      .filter((m) => m.mcp_server_id)
      .map((m) => ({
        mcp_server_id: m.mcp_server_id!,
        tool_filters: m.tool_filters,
        tools_requiring_approval: m.tools_requiring_approval,
      })),
    sandbox: {
      enabled: d.sandbox.enabled,
      docker_image: d.sandbox.docker_image.trim() === '' ? null : d.sandbox.docker_image.trim(),
      require_approval: d.sandbox.require_approval,
    },
    budget: budgetOf(d.budget),
    budget_wait_timeout_ms: orNull(d.budget_wait_timeout_ms),
    non_idempotent_tools: d.non_idempotent_tools,
    decision_timeout_ms: orNull(d.decision_timeout_ms),
    input_timeout_ms: orNull(d.input_timeout_ms),
    authorization_timeout_ms: orNull(d.authorization_timeout_ms),
    memory_tools: d.memory_tools,
    context: contextOf(d.context),
    // The whole of expose is sent (PATCH replaces it), so the message stays
    // stored while the MCP box is unchecked.
    expose: {
      mcp: d.expose.mcp,
      a2a: d.expose.a2a,
      mcp_message: d.expose.mcp_message.trim() === '' ? null : d.expose.mcp_message,
    },
    sub_agents: d.sub_agents.map((s) =>
      s.description.trim() === ''
        ? { agent_id: s.agent_id, requires_approval: s.requires_approval }
        : { agent_id: s.agent_id, description: s.description.trim(), requires_approval: s.requires_approval },
    ),
    // An entry whose agent is not chosen yet is left out, as an MCP server's is.
    a2a_agents: d.a2a_agents
      .filter((r) => r.a2a_agent_id)
      .map((r) => ({
        a2a_agent_id: r.a2a_agent_id!,
        tool_filters: r.tool_filters,
        tools_requiring_approval: r.tools_requiring_approval,
      })),
  };
  if (d.max_iterations !== '') body.max_iterations = Number(d.max_iterations);
  return body;
}
