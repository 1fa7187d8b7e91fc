/**
 * A turn's plan: what its first model call resolves (agent, model, prompt
 * version by label, schema, summarizer, sandbox and skills, the project's
 * virtual key) and pins on the run, so the rest of the turn, and its
 * retries, see the same agent even when it is edited meanwhile. The run's
 * `overrides` (converse) replace the agent's model, prompt version and model
 * parameters for this turn only; the summarizer keeps the agent's.
 */
import type { Db } from '../../core/db/knex.js';
import { renderTemplate } from '../../core/prompts/prompt-template.js';
import { ModelsRepository } from '../../core/repositories/models.repository.js';
import { PromptsRepository } from '../../core/repositories/prompts.repository.js';
import type { RunOverrides } from '../../core/db/tables/index.js';
import { RunsRepository } from '../../core/repositories/runs.repository.js';
import { TurnsRepository, type TurnStartRow } from '../../core/repositories/turns.repository.js';
import { metrics } from '../../core/telemetry/metrics.js';
import { agentSkills, skillsPromptSection } from '../skills/skills.js';
import { resolveSubAgents } from './sub-agents.js';
import { hasA2aAgents } from '../tools/a2a-tools.js';
import { runToolsRecord, sandboxState } from './tools.js';
import type { PlanModel, SessionDeps, TurnPlan } from './types.js';

type Fail = { kind: 'fail'; error: { code: string; message: string } };

/** How a turn starts: unable to start (why), or its plan and the warnings to record with it. */
export type TurnStart = Fail | { kind: 'run'; plan: TurnPlan; warnings: string[] };

type Agent = NonNullable<TurnStartRow['j_agent']>;
type SandboxPlan = Pick<
  TurnPlan,
  'sandbox_enabled' | 'sandbox_requested' | 'sandbox_image' | 'sandbox_require_approval' | 'skills'
>;

const DEFAULT_SUMMARIZER_PROMPT =
  'Summarize the conversation below so that it can replace it as context for the assistant. Keep every fact, decision, name, number and open question; be concise.';

function fail(code: string, message: string): Fail {
  return { kind: 'fail', error: { code, message } };
}

/** A model naming no provider is served by the only one of its type; with none, or several, it cannot be called. */
const noProvider = (name: string) =>
  `model "${name}" names no provider and there is not exactly one provider of its type: set its provider_id`;

/**
 * The turn's model as the plan records it (the agent's, or the one the run's
 * overrides name, with their parameters over the model's), or why it cannot be called.
 */
function turnModel(
  agent: Agent,
  m: TurnStartRow['j_model'],
  overrides: RunOverrides | null,
): PlanModel | Fail {
  if (!m) return fail('model_unavailable', `model ${overrides?.model_id ?? agent.model_id} no longer exists`);
  if (!m.provider_id) return fail('model_unavailable', noProvider(m.name));
  const parameters = overrides?.parameters ? { ...m.parameters, ...overrides.parameters } : m.parameters;
  return { id: m.id, model_id: m.model_id, provider_id: m.provider_id, parameters };
}

/** Why the turn has no prompt version: the one its overrides chose is gone, or the agent's label points nowhere. */
function noPromptVersion(agent: Agent, overrides: RunOverrides | null): Fail {
  if (overrides?.prompt_version_id)
    return fail('prompt_not_found', `prompt version ${overrides.prompt_version_id} no longer exists`);
  return fail('prompt_not_found', `the agent's prompt has no version labelled "${agent.prompt_label}"`);
}

/** The summarizer's model (the agent's unless it names one): the model, or why it cannot be called. */
async function summarizerModel(db: Db, modelId: string): Promise<PlanModel | string> {
  const models = new ModelsRepository(db);
  const model = await models.findById(modelId);
  if (!model) return `model ${modelId} no longer exists`;
  const providerId = await models.servingProviderId(model);
  if (!providerId) return noProvider(model.name);
  return {
    id: model.id,
    model_id: model.model_id,
    provider_id: providerId,
    parameters: model.parameters,
  };
}

/** The llm summarizer's prompt (rendered with the turn's context) and model; null for other summarizers. */
async function resolveSummarizer(
  db: Db,
  agent: Agent,
  context: Record<string, unknown>,
): Promise<{ kind: 'ok'; summarizer: TurnPlan['summarizer'] } | Fail> {
  if (agent.summarizer_type !== 'llm') return { kind: 'ok', summarizer: null };
  const model = await summarizerModel(db, agent.llm_summarizer_model_id ?? agent.model_id);
  if (typeof model === 'string') return fail('model_unavailable', `summarizer: ${model}`);
  let system = DEFAULT_SUMMARIZER_PROMPT;
  let promptVersionId: string | null = null;
  if (agent.llm_summarizer_prompt_id) {
    const label = agent.llm_summarizer_prompt_label ?? 'latest';
    const version = await new PromptsRepository(db).versionByLabel(agent.llm_summarizer_prompt_id, label);
    if (!version) return fail('prompt_not_found', `the summarizer prompt has no version labelled "${label}"`);
    system = renderTemplate(version.template, context).text;
    promptVersionId = version.id;
  }
  return { kind: 'ok', summarizer: { prompt_version_id: promptVersionId, system, model } };
}

/** The sandbox the turn offers and the skills it lists; adds to `warnings` what the agent asks for and does not get. */
async function resolveSandbox(deps: SessionDeps, agent: Agent, warnings: string[]): Promise<SandboxPlan> {
  const sandbox = agent.sandbox as {
    enabled?: boolean;
    docker_image?: string | null;
    require_approval?: boolean;
  } | null;
  const sandboxEnabled = Boolean(sandbox?.enabled && deps.config.sandboxEnabled);
  if (sandbox?.enabled && !deps.config.sandboxEnabled)
    warnings.push(
      'the agent enables the sandbox but this server has no sandbox backend (SANDBOX_ENABLED is unset): execute_bash_commands is not offered',
    );
  // Skills are read through the sandbox: listed only when it is there.
  // Only the docker and process backends mount skills (activities/sandbox/README.md).
  const mountsSkills = deps.sandbox?.backend !== 'kubernetes';
  const skills = sandboxEnabled && mountsSkills ? await agentSkills(deps.db, agent.id) : [];
  if (sandboxEnabled && !mountsSkills && (await agentSkills(deps.db, agent.id)).length)
    warnings.push(
      "the kubernetes sandbox backend does not mount skills yet: the agent's skills are not listed",
    );
  return {
    sandbox_enabled: sandboxEnabled,
    sandbox_requested: Boolean(sandbox?.enabled),
    sandbox_image: sandbox?.docker_image ?? null,
    sandbox_require_approval: Boolean(sandbox?.require_approval),
    skills,
  };
}

/** The plan from the resolved parts. */
function turnPlan(
  row: TurnStartRow,
  agent: Agent,
  parts: Pick<TurnPlan, 'model' | 'system' | 'summarizer'> & {
    version: { id: string; version: number };
    sandbox: SandboxPlan;
  },
): TurnPlan {
  return {
    project_id: row.project_id,
    agent_id: agent.id,
    agent_name: agent.name,
    conversation_id: row.j_conversation_id!,
    thread_id: row.thread_id,
    max_iterations: agent.max_iterations,
    enable_history: agent.enable_history,
    summarizer_type: agent.summarizer_type,
    sliding_window_keep_count: agent.sliding_window_keep_count,
    llm_summarizer_token_threshold: agent.llm_summarizer_token_threshold,
    llm_summarizer_keep_recent_count: agent.llm_summarizer_keep_recent_count,
    model: parts.model,
    prompt_version_id: parts.version.id,
    prompt_version: parts.version.version,
    system: parts.system,
    schema: row.j_schema,
    summarizer: parts.summarizer,
    virtual_key_id: row.j_virtual_key_id,
    ...parts.sandbox,
    mcp_servers: row.j_mcp ?? [],
    approval_timeout_ms: agent.approval_timeout_ms,
    non_idempotent_tools: agent.non_idempotent_tools ?? [],
    decision_timeout_ms: agent.decision_timeout_ms ?? null,
    input_timeout_ms: agent.input_timeout_ms ?? null,
    authorization_timeout_ms: agent.authorization_timeout_ms ?? null,
    memory_tools: Boolean(agent.memory_tools),
    a2a_agents: agent.a2a_agents ?? [],
  };
}

/**
 * Resolves the agent for this turn (from `TurnsRepository.startRow`): model,
 * prompt version by label (a label moved later affects the next turn) or as
 * the run's overrides chose, schema, summarizer. The caller pins the plan on
 * the run (`pinPlan`).
 */
export async function resolvePlan(deps: SessionDeps, row: TurnStartRow): Promise<TurnStart> {
  const agent = row.j_agent;
  if (!agent || !row.agent_id) return fail('agent_not_found', 'the agent no longer exists');
  const model = turnModel(agent, row.j_model, row.overrides);
  if ('kind' in model) return model;
  const version = row.j_prompt;
  if (!version) return noPromptVersion(agent, row.overrides);
  // The agent's context gives defaults; the conversation's (converse's `context` included) wins.
  const context = { ...(agent.context ?? {}), ...(row.j_context ?? {}) };
  const warnings: string[] = [];
  const rendered = renderTemplate(version.template, context);
  for (const name of rendered.missing)
    warnings.push(
      `template variable "${name}" is set in neither the agent's nor the conversation's context; it rendered empty`,
    );
  if (agent.schema_id && !row.j_schema)
    return fail('schema_not_found', "the agent's schema no longer exists");
  const summarizer = await resolveSummarizer(deps.db, agent, context);
  if (summarizer.kind === 'fail') return summarizer;
  const sandbox = await resolveSandbox(deps, agent, warnings);
  const skillsText = skillsPromptSection(sandbox.skills);
  const system = skillsText ? [rendered.text, skillsText].filter(Boolean).join('\n\n') : rendered.text;
  const plan = turnPlan(row, agent, { model, version, system, summarizer: summarizer.summarizer, sandbox });
  const subAgents = await resolveSubAgents(deps, row.id, agent, warnings);
  return { kind: 'run', plan: subAgents ? { ...plan, sub_agents: subAgents } : plan, warnings };
}

/**
 * Pins the plan (and the agent version it came from) on the run and marks it running. Idempotent: when a
 * concurrent first attempt pinned first, its plan is the one returned.
 */
export async function pinPlan(
  db: Db,
  run: TurnStartRow,
  plan: TurnPlan,
  warnings: string[],
): Promise<TurnPlan> {
  const pinned = await new TurnsRepository(db).pinPlan(run.id, {
    plan,
    promptVersionId: plan.prompt_version_id,
    // The version of the agent row this plan was resolved from, read in the same statement.
    agentVersion: run.j_agent?.version ?? null,
    warnings: [...run.warnings, ...warnings],
    // Without MCP servers the tools are known now; with them, `listTools` records them.
    ...(plan.mcp_servers.length || hasA2aAgents(plan)
      ? {}
      : { tools: runToolsRecord(sandboxState(plan), undefined, plan.memory_tools, plan.sub_agents) }),
  });
  if (!pinned) return (await new RunsRepository(db).findById(run.id))!.plan as unknown as TurnPlan;
  metrics().session.turnStarted(); // once: only the attempt that pinned counts
  return plan;
}
