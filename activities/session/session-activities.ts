import { context as otelContext, trace } from '@opentelemetry/api';
import type { Knex } from 'knex';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Config } from '../../api/config.js';
import type { SecretBox } from '../../api/crypto/secrets.js';
import type { Db } from '../../api/db/knex.js';
import type { DbModel, DbProvider, DbVirtualKey } from '../../api/db/llm-config.tables.js';
import { targetOf } from '../../api/gateway/upstream.js';
import type { Logger } from '../../api/logger.js';
import {
  BudgetExceededError,
  RateLimitedError,
  UnpricedModelError,
  type Admission,
  type GatewayPolicyService,
} from '../../api/services/gateway-policy.service.js';
import { costUsd } from '../../api/services/pricing.js';
import { renderTemplate } from '../../api/services/prompt-template.js';
import { startModelCallSpan } from '../../api/telemetry/genai.js';
import type { FinishTurnArgs, ModelStepResult } from '../../workflows/session.definitions.js';
import { complete, openStream } from '../llm/client.js';
import { InvalidLlmRequestError, UnsupportedFeatureError, UpstreamError } from '../llm/errors.js';
import type { LlmRequest, ProviderTarget, ToolCall, Usage } from '../llm/types.js';
import {
  estimateTokens,
  messageText,
  selectHistory,
  summarizationSlice,
  toLlmMessages,
  transcriptForSummary,
  type StoredMessage,
  type SummarizerType,
} from './context.js';
import { DeltaWriter } from './delta-writer.js';
import { agentSkills, skillsPromptSection, type SkillSummary } from '../skills/skills.js';
import type { AgentMcpEntry } from '../tools/mcp-tools.js';
import type { SandboxManager } from '../sandbox/sandbox-manager.js';
import { createToolActivities } from './tool-activities.js';
import { heartbeating, loadTurnRun } from './turn-run.js';
import { planToolCalls, runToolsRecord, toolDefinitions, sandboxState, type RunTools } from './tools.js';
import {
  appendRunEvent,
  findRun,
  isTerminal,
  storeStep,
  storeToolResult,
  type DbRun,
  type StepEvent,
} from './run-store.js';

export interface SessionDeps {
  config: Config;
  db: Db;
  logger: Logger;
  secrets: SecretBox;
  policy: GatewayPolicyService;
  /** The session sandboxes (execute_bash_commands); absent or disabled: the tool is not offered. */
  sandbox?: SandboxManager;
}

interface PlanModel {
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
  /** Skills listed in the system prompt (sandbox agents only). */
  skills: SkillSummary[];
}

/** How a turn starts: unable to start (why), or its plan and the warnings to record with it. */
type TurnStart =
  | { kind: 'fail'; error: { code: string; message: string } }
  | { kind: 'run'; plan: TurnPlan; warnings: string[] };

/** A run with what its turn resolves at start (`j_*`, null once the plan is pinned) and its model's provider. */
type TurnRow = DbRun & {
  j_agent: (Record<string, unknown> & { id: string; name: string }) | null;
  j_conversation_id: string | null;
  j_context: Record<string, unknown> | null;
  j_virtual_key_id: string | null;
  j_model: {
    id: string;
    name: string;
    model_id: string;
    provider_id: string | null;
    parameters: Record<string, unknown>;
  } | null;
  j_prompt: { id: string; version: number; template: string } | null;
  j_schema: { id: string; name: string; schema: Record<string, unknown> } | null;
  j_provider: DbProvider | null;
  j_mcp: AgentMcpEntry[] | null;
};

const DEFAULT_SUMMARIZER_PROMPT =
  'Summarize the conversation below so that it can replace it as context for the assistant. Keep every fact, decision, name, number and open question; be concise.';

const MESSAGE_COLUMNS = ['id', 'seq', 'run_id', 'role', 'content', 'tool_calls', 'tool_call_id', 'hidden'];

/** Postgres returns bigint seq as a string. */
function storedRows(rows: Array<Record<string, unknown>>): StoredMessage[] {
  return rows.map((r) => ({ ...(r as unknown as StoredMessage), seq: Number(r.seq) }));
}

function fail(code: string, message: string): { kind: 'fail'; error: { code: string; message: string } } {
  return { kind: 'fail', error: { code, message } };
}

function nonRetryable(code: string, message: string, details?: unknown): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, code, ...(details !== undefined ? [details] : []));
}

/** A failed model call as Temporal should treat it: retry transient trouble, stop on the caller's mistakes. */
function modelFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof UnsupportedFeatureError || err instanceof InvalidLlmRequestError)
    return nonRetryable('invalid_model_request', err.message);
  if (err instanceof UpstreamError) {
    const transient = err.retryable || err.status === 429 || err.status >= 500 || err.status === 0;
    if (transient)
      return ApplicationFailure.create({
        message: err.message,
        type: 'model_unavailable',
        details: [{ status: err.status }],
        ...(err.retryAfterMs !== undefined ? { nextRetryDelay: err.retryAfterMs } : {}),
      });
    const code =
      err.status === 401 || err.status === 403
        ? 'model_auth_failed'
        : err.status === 404
          ? 'model_not_found'
          : 'model_bad_request';
    return nonRetryable(code, err.message, { status: err.status });
  }
  if (err instanceof BudgetExceededError) return nonRetryable('budget_exceeded', err.message);
  if (err instanceof UnpricedModelError) return nonRetryable('unpriced_model', err.message);
  if (err instanceof RateLimitedError)
    return ApplicationFailure.create({
      message: err.message,
      type: 'rate_limited',
      nextRetryDelay: err.retryAfterSeconds * 1000,
    });
  return err;
}

/** Model parameters (Model resource `parameters`) that map onto a request. */
function requestParameters(params: Record<string, unknown>): Partial<LlmRequest> {
  const out: Partial<LlmRequest> = {};
  if (typeof params.temperature === 'number') out.temperature = params.temperature;
  if (typeof params.top_p === 'number') out.top_p = params.top_p;
  if (typeof params.max_tokens === 'number') out.max_tokens = params.max_tokens;
  if (Array.isArray(params.stop)) out.stop = params.stop.filter((s): s is string => typeof s === 'string');
  return out;
}

function validateStructured(
  schema: Record<string, unknown>,
  text: string,
): { ok: true; value: unknown } | { ok: false; errors: string[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, errors: ['the answer is not valid JSON'] };
  }
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true, logger: false });
  const validate = ajv.compile(schema);
  if (validate(value)) return { ok: true, value };
  return {
    ok: false,
    errors: (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`),
  };
}

/**
 * The session's activities. Each takes ids, reads what it needs from
 * Postgres, and is idempotent: a retry after a crash finds the rows its
 * earlier attempt wrote (messages by run and step, events by key) and does
 * not write, or call the model, twice.
 */
export function createSessionActivities(deps: SessionDeps) {
  const { db, secrets, policy } = deps;

  const loadPlan = (runId: string) => loadTurnRun(db, runId);

  /** The thread's messages with their run's place in the session (see context.ts). */
  async function threadRows(threadId: string, currentRunId: string): Promise<StoredMessage[]> {
    const rows = await db('messages as m')
      .leftJoin('runs as r', 'r.id', 'm.run_id')
      .where('m.thread_id', threadId)
      .orderBy('m.seq')
      .select<Array<Record<string, unknown>>>(
        ...MESSAGE_COLUMNS.map((c) => `m.${c}`),
        db.raw('extract(epoch from coalesce(r.started_at, r.created_at)) * 1000 as turn_at'),
        'r.status as run_status',
      );
    return storedRows(rows).map((r, i) => {
      const raw = rows[i]!;
      const status = raw.run_status as string | null;
      return {
        ...r,
        // The current turn started after every finished one (its start may not be stored yet).
        ...(r.run_id === currentRunId
          ? { turn_at: Number.MAX_SAFE_INTEGER }
          : raw.turn_at != null
            ? { turn_at: Number(raw.turn_at) }
            : {}),
        pending:
          r.run_id !== null && r.run_id !== currentRunId && status !== null && !isTerminal(status as never),
      };
    });
  }

  async function latestSummary(
    threadId: string,
  ): Promise<{ content: string; through_seq: number } | undefined> {
    const row = await db('thread_summaries')
      .where({ thread_id: threadId })
      .orderBy('through_seq', 'desc')
      .first<{ content: string; through_seq: string } | undefined>('content', 'through_seq');
    return row ? { content: row.content, through_seq: Number(row.through_seq) } : undefined;
  }

  async function providerTarget(model: PlanModel): Promise<{ target: ProviderTarget; provider: DbProvider }> {
    const provider = await db('providers').where({ id: model.provider_id }).first<DbProvider | undefined>();
    if (!provider) throw nonRetryable('provider_not_found', `the model's provider no longer exists`);
    return { target: targetOf(provider, secrets), provider };
  }

  /** The project's virtual key, when it names one: its grants, limits and budget apply to the agent's calls. */
  async function admit(
    plan: TurnPlan,
    provider: DbProvider,
    model: string,
    req: LlmRequest,
  ): Promise<Admission | undefined> {
    if (!plan.virtual_key_id) return undefined;
    const key = await db('virtual_keys').where({ id: plan.virtual_key_id }).first<DbVirtualKey | undefined>();
    if (!key) throw nonRetryable('virtual_key_not_found', "the project's virtual key no longer exists");
    if (key.expires_at && key.expires_at.getTime() <= Date.now())
      throw nonRetryable('virtual_key_expired', "the project's virtual key has expired");
    const grant = await db('virtual_key_grants')
      .where({ virtual_key_id: key.id, provider_id: provider.id })
      .first<{ model_names: string[] } | undefined>('model_names');
    if (!grant || !(grant.model_names.includes(model) || grant.model_names.includes('*')))
      throw nonRetryable(
        'model_not_granted',
        `model "${provider.name}/${model}" is not granted to the project's virtual key`,
      );
    try {
      return await policy.admit(
        { id: key.id, rate_limit: key.rate_limit, budget: key.budget },
        {
          providerId: provider.id,
          providerName: provider.name,
          model,
          inputTokens: Math.ceil(JSON.stringify(req.messages).length / 4) + estimateTokens([req.system]),
          maxOutputTokens: req.max_tokens ?? 4_096,
        },
      );
    } catch (err) {
      throw modelFailure(err);
    }
  }

  /** The GenAI span of one of the session's model calls, carrying the session's ids. */
  function modelCallSpan(plan: TurnPlan, provider: DbProvider, req: LlmRequest, stream: boolean) {
    return startModelCallSpan({
      system: provider.provider_type,
      model: req.model,
      projectId: plan.project_id,
      agentId: plan.agent_id,
      conversationId: plan.conversation_id,
      ...(plan.virtual_key_id ? { virtualKeyId: plan.virtual_key_id } : {}),
      stream,
      ...(req.max_tokens !== undefined ? { maxTokens: req.max_tokens } : {}),
      input: req.messages,
    });
  }

  /** Keeps Temporal told the activity is alive while a model thinks (it may be silent for a long time). */
  async function resolvePrompt(
    promptId: string,
    label: string,
  ): Promise<{ id: string; version: number; template: string } | undefined> {
    return await db('prompt_labels as l')
      .join('prompt_versions as v', 'v.id', 'l.version_id')
      .where({ 'l.prompt_id': promptId, 'l.label': label })
      .first<{ id: string; version: number; template: string } | undefined>(
        'v.id',
        'v.version',
        'v.template',
      );
  }

  async function planModel(modelId: string): Promise<PlanModel | string> {
    const model = await db('models').where({ id: modelId }).first<DbModel | undefined>();
    if (!model) return `model ${modelId} no longer exists`;
    if (!model.provider_id) return `model "${model.name}" has no provider`;
    return {
      id: model.id,
      model_id: model.model_id,
      provider_id: model.provider_id,
      parameters: model.parameters,
    };
  }

  /**
   * The run with, in the same statement, everything its turn resolves at
   * start (agent, conversation context, project key, model, prompt version
   * by label, schema) and the provider of the model it calls: one round trip
   * on the turn's critical path instead of one per table.
   */
  async function turnRow(runId: string): Promise<TurnRow | undefined> {
    const { rows } = await db.raw<{ rows: TurnRow[] }>(
      `select r.*,
              to_jsonb(a) as j_agent,
              c.id as j_conversation_id, c.context as j_context,
              p.virtual_key_id as j_virtual_key_id,
              to_jsonb(m) as j_model,
              (select jsonb_build_object('id', v.id, 'version', v.version, 'template', v.template)
                 from prompt_labels l join prompt_versions v on v.id = l.version_id
                where l.prompt_id = a.prompt_id and l.label = a.prompt_label) as j_prompt,
              (select jsonb_build_object('id', s.id, 'name', s.name, 'schema', s.schema)
                 from schemas s where s.id = a.schema_id) as j_schema,
              to_jsonb(pr) as j_provider,
              (select jsonb_agg(jsonb_build_object('mcp_server_id', e.mcp_server_id, 'tool_filters', e.tool_filters,
                                                   'tools_requiring_approval', e.tools_requiring_approval) order by e.position)
                 from agent_mcp_servers e where e.agent_id = a.id) as j_mcp
         from runs r
         left join agents a on a.id = r.agent_id and r.plan is null
         left join conversations c on c.pk = r.conversation_pk and r.plan is null
         left join projects p on p.id = r.project_id and r.plan is null
         left join models m on m.id = a.model_id
         left join providers pr on pr.id = coalesce((r.plan->'model'->>'provider_id')::uuid, m.provider_id)
        where r.id = ?`,
      [runId],
    );
    return rows[0];
  }

  /**
   * Resolves the agent for this turn (from `turnRow`): model, prompt version
   * by label (a label moved later affects the next turn), schema, summarizer.
   * The caller pins the plan on the run (`pinPlan`).
   */
  async function resolvePlan(row: TurnRow): Promise<TurnStart> {
    const agent = row.j_agent;
    if (!agent || !row.agent_id) return fail('agent_not_found', 'the agent no longer exists');
    const label = agent.prompt_label as string;
    const m = row.j_model;
    if (!m) return fail('model_unavailable', `model ${agent.model_id as string} no longer exists`);
    if (!m.provider_id) return fail('model_unavailable', `model "${m.name}" has no provider`);
    const model: PlanModel = {
      id: m.id,
      model_id: m.model_id,
      provider_id: m.provider_id,
      parameters: m.parameters,
    };
    const version = row.j_prompt;
    if (!version) return fail('prompt_not_found', `the agent's prompt has no version labelled "${label}"`);
    const context = row.j_context ?? {};
    const warnings: string[] = [];
    const rendered = renderTemplate(version.template, context);
    for (const name of rendered.missing)
      warnings.push(
        `template variable "${name}" is not set in the conversation's context; it rendered empty`,
      );
    if (agent.schema_id && !row.j_schema)
      return fail('schema_not_found', "the agent's schema no longer exists");
    let summarizer: TurnPlan['summarizer'] = null;
    if (agent.summarizer_type === 'llm') {
      const sModel = await planModel(
        (agent.llm_summarizer_model_id as string | null) ?? (agent.model_id as string),
      );
      if (typeof sModel === 'string') return fail('model_unavailable', `summarizer: ${sModel}`);
      let system = DEFAULT_SUMMARIZER_PROMPT;
      let promptVersionId: string | null = null;
      if (agent.llm_summarizer_prompt_id) {
        const sLabel = (agent.llm_summarizer_prompt_label as string | null) ?? 'latest';
        const sVersion = await resolvePrompt(agent.llm_summarizer_prompt_id as string, sLabel);
        if (!sVersion)
          return fail('prompt_not_found', `the summarizer prompt has no version labelled "${sLabel}"`);
        system = renderTemplate(sVersion.template, context).text;
        promptVersionId = sVersion.id;
      }
      summarizer = { prompt_version_id: promptVersionId, system, model: sModel };
    }
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
    // Skills are read through the sandbox: listed only when it is there (§1).
    // Only the docker and process backends mount skills (activities/sandbox/README.md).
    const mountsSkills = deps.sandbox?.backend !== 'kubernetes';
    const skills = sandboxEnabled && mountsSkills ? await agentSkills(db, agent.id) : [];
    if (sandboxEnabled && !mountsSkills && (await agentSkills(db, agent.id)).length)
      warnings.push(
        "the kubernetes sandbox backend does not mount skills yet: the agent's skills are not listed",
      );
    const skillsText = skillsPromptSection(skills);
    const system = skillsText ? [rendered.text, skillsText].filter(Boolean).join('\n\n') : rendered.text;
    const plan: TurnPlan = {
      project_id: row.project_id,
      agent_id: agent.id,
      agent_name: agent.name,
      conversation_id: row.j_conversation_id!,
      thread_id: row.thread_id,
      max_iterations: agent.max_iterations as number,
      enable_history: agent.enable_history as boolean,
      summarizer_type: agent.summarizer_type as SummarizerType,
      sliding_window_keep_count: agent.sliding_window_keep_count as number | null,
      llm_summarizer_token_threshold: agent.llm_summarizer_token_threshold as number | null,
      llm_summarizer_keep_recent_count: agent.llm_summarizer_keep_recent_count as number | null,
      model,
      prompt_version_id: version.id,
      prompt_version: version.version,
      system,
      schema: row.j_schema,
      summarizer,
      virtual_key_id: row.j_virtual_key_id,
      sandbox_enabled: sandboxEnabled,
      sandbox_requested: Boolean(sandbox?.enabled),
      sandbox_image: sandbox?.docker_image ?? null,
      sandbox_require_approval: Boolean(sandbox?.require_approval),
      mcp_servers: row.j_mcp ?? [],
      approval_timeout_ms: (agent.approval_timeout_ms as number | null) ?? null,
      skills,
    };
    return { kind: 'run', plan, warnings };
  }

  /**
   * Pins the plan on the run and marks it running. Idempotent: when a
   * concurrent first attempt pinned first, its plan is the one returned.
   */
  async function pinPlan(run: DbRun, plan: TurnPlan, warnings: string[]): Promise<TurnPlan> {
    const updated = await db('runs')
      .where({ id: run.id })
      .whereNull('plan')
      .update({
        plan: JSON.stringify(plan),
        status: 'running',
        started_at: db.fn.now(),
        prompt_version_id: plan.prompt_version_id,
        warnings: JSON.stringify([...run.warnings, ...warnings]),
        // Without MCP servers the tools are known now; with them, `listTools` records them.
        ...(plan.mcp_servers.length ? {} : { tools: JSON.stringify(runToolsRecord(sandboxState(plan))) }),
      });
    return updated === 0 ? ((await findRun(db, run.id))!.plan as unknown as TurnPlan) : plan;
  }

  /** Whether the thread has grown past the llm summarizer's threshold (and has turns to fold). */
  async function needsSummary(plan: TurnPlan, runId: string): Promise<boolean> {
    if (!(plan.summarizer_type === 'llm' && plan.enable_history && plan.llm_summarizer_token_threshold))
      return false;
    const thread = await db('threads')
      .where({ id: plan.thread_id })
      .first<{ last_input_tokens: number | null }>('last_input_tokens');
    const rows = await threadRows(plan.thread_id, runId);
    const previous = await latestSummary(plan.thread_id);
    const tokens =
      thread.last_input_tokens ??
      estimateTokens([
        plan.system,
        previous?.content,
        ...selectHistory(rows, {
          currentRunId: runId,
          enableHistory: true,
          summarizer: 'llm',
          ...(previous ? { summaryThroughSeq: previous.through_seq } : {}),
        }).map((r) => messageText(r.content)),
      ]);
    return (
      tokens >= plan.llm_summarizer_token_threshold &&
      summarizationSlice(rows, runId, plan.llm_summarizer_keep_recent_count ?? 1, previous?.through_seq) !==
        undefined
    );
  }

  return {
    /** Folds the older turns into a stored summary with the summarizer prompt and model. */
    async summarizeHistory(runId: string): Promise<{ summarized: number }> {
      const { plan } = await loadPlan(runId);
      if (!plan.summarizer) return { summarized: 0 };
      if (await db('thread_summaries').where({ run_id: runId }).first('id')) return { summarized: 0 };
      const rows = await threadRows(plan.thread_id, runId);
      const previous = await latestSummary(plan.thread_id);
      const slice = summarizationSlice(
        rows,
        runId,
        plan.llm_summarizer_keep_recent_count ?? 1,
        previous?.through_seq,
      );
      if (!slice) return { summarized: 0 };
      const { target, provider } = await providerTarget(plan.summarizer.model);
      const req: LlmRequest = {
        model: plan.summarizer.model.model_id,
        ...requestParameters(plan.summarizer.model.parameters),
        system: plan.summarizer.system,
        messages: [
          {
            role: 'user',
            content: [{ type: 'text', text: transcriptForSummary(previous?.content, slice.older) }],
          },
        ],
      };
      const admission = await admit(plan, provider, req.model, req);
      const span = modelCallSpan(plan, provider, req, false);
      const stop = heartbeating();
      let usage: Usage | undefined;
      try {
        const res = await otelContext.with(trace.setSpan(otelContext.active(), span.span), () =>
          complete(target, req, Context.current().cancellationSignal),
        );
        usage = res.usage;
        span.end({
          responseModel: res.model,
          inputTokens: usage.input_tokens,
          outputTokens: usage.output_tokens,
          finishReasons: [res.finish_reason],
        });
        await db('thread_summaries')
          .insert({
            thread_id: plan.thread_id,
            run_id: runId,
            through_seq: slice.throughSeq,
            content: res.text,
            usage: JSON.stringify(res.usage),
          })
          .onConflict(db.raw('(run_id) where run_id is not null'))
          .ignore();
        return { summarized: slice.older.length };
      } catch (err) {
        span.fail(err, err instanceof UpstreamError ? String(err.status) : undefined);
        throw modelFailure(err);
      } finally {
        stop();
        if (admission)
          await policy
            .settle(admission, {
              inputTokens: usage?.input_tokens ?? 0,
              outputTokens: usage?.output_tokens ?? 0,
              status: usage ? 200 : 502,
            })
            .catch((err: unknown) => deps.logger.warn({ err }, 'settling a summarizer call failed'));
      }
    },

    /**
     * One model call of the turn, streamed: text deltas become run events as
     * they arrive; the answer is stored as the step's assistant message. A
     * retry of a step whose answer is already stored returns it without
     * calling the model again.
     */
    async callModel(runId: string, step: number, summarized = false): Promise<ModelStepResult> {
      // The turn starts with its first model call (no separate step, so nothing
      // stands between the Update and the model): the plan is pinned here.
      const row = await turnRow(runId);
      if (!row || isTerminal(row.status)) return { kind: 'over' };
      const run: DbRun = row;
      let plan = run.plan as unknown as TurnPlan | null;
      let pinning: Promise<TurnPlan> | undefined;
      if (!plan) {
        if (step !== 1 || summarized) throw nonRetryable('turn_not_started', `run ${runId} has no plan`);
        const start = await resolvePlan(row);
        if (start.kind === 'fail') {
          await db.transaction((trx) => closeRun(trx, { runId, status: 'failed', error: start.error }));
          return { kind: 'over' };
        }
        plan = start.plan;
        if (plan.summarizer_type === 'llm') {
          // Pin first, then decide whether to summarize before the call.
          plan = await pinPlan(run, plan, start.warnings);
          if (await needsSummary(plan, runId)) return { kind: 'summarize' };
        } else pinning = pinPlan(run, plan, start.warnings);
      } else if (step === 1 && !summarized && plan.summarizer_type === 'llm') {
        // A retry of the first step after its plan was pinned.
        if (await needsSummary(plan, runId)) return { kind: 'summarize' };
      }
      if (plan.mcp_servers.length && !row.tools) {
        // The MCP servers' tools are listed once per turn, in their own activity.
        await pinning;
        return { kind: 'list_tools' };
      }
      const runTools = (row.tools as RunTools | null) ?? runToolsRecord(sandboxState(plan));
      if (!row.j_provider) throw nonRetryable('provider_not_found', `the model's provider no longer exists`);
      const provider = row.j_provider;
      const target = targetOf(provider, secrets);
      const turnPlan = plan;
      const stepKey = `${step}.assistant`;
      // Independent statements go out together: this runs on the turn's critical path.
      const offered = toolDefinitions(runTools);
      const [pinned, stored, rows, summary] = await Promise.all([
        pinning ?? Promise.resolve(turnPlan),
        db('messages')
          .where({ run_id: runId, step_key: stepKey })
          .first<{ content: unknown; tool_calls: ToolCall[] | null } | undefined>('content', 'tool_calls'),
        threadRows(turnPlan.thread_id, runId),
        turnPlan.summarizer_type === 'llm' && turnPlan.enable_history
          ? latestSummary(turnPlan.thread_id)
          : Promise.resolve(undefined),
      ]);
      // A concurrent first attempt may have pinned its own plan: go on with that one.
      plan = pinned;
      if (stored) return stepResult(plan, runTools, messageText(stored.content), stored.tool_calls ?? []);

      const history = selectHistory(rows, {
        currentRunId: runId,
        enableHistory: plan.enable_history,
        summarizer: plan.summarizer_type,
        ...(plan.sliding_window_keep_count ? { keepTurns: plan.sliding_window_keep_count } : {}),
        ...(summary ? { summaryThroughSeq: summary.through_seq } : {}),
      });
      const req: LlmRequest = {
        model: plan.model.model_id,
        ...requestParameters(plan.model.parameters),
        ...(plan.system ? { system: plan.system } : {}),
        ...(summary ? { extra_system: [`Summary of the earlier conversation:\n${summary.content}`] } : {}),
        messages: toLlmMessages(history),
        ...(offered.length ? { tools: offered } : {}),
        ...(plan.schema
          ? {
              response_format: {
                type: 'json_schema' as const,
                name: plan.schema.name,
                schema: plan.schema.schema,
              },
            }
          : {}),
      };

      const admission = await admit(plan, provider, req.model, req);
      const span = modelCallSpan(plan, provider, req, true);
      const ctx = Context.current();
      const writer = new DeltaWriter(
        db,
        runId,
        step,
        ctx.info.attempt > 1 ? await priorText(runId, step) : '',
      );
      const stop = heartbeating();
      let usage: Usage | undefined;
      let text = '';
      let finish = 'stop';
      let pendingDeltas: StepEvent[];
      const calls = new Map<number, ToolCall>();
      try {
        await otelContext.with(trace.setSpan(otelContext.active(), span.span), async () => {
          const events = await openStream(target, req, ctx.cancellationSignal);
          for await (const ev of events) {
            if (ev.type === 'text') {
              text += ev.text;
              writer.push(ev.text);
            } else if (ev.type === 'tool_call_start')
              calls.set(ev.index, { id: ev.id, name: ev.name, arguments: '' });
            else if (ev.type === 'tool_call_delta') {
              const call = calls.get(ev.index);
              if (call) call.arguments += ev.arguments;
            } else if (ev.type === 'usage') usage = ev.usage;
            else if (ev.type === 'finish') finish = ev.finish_reason;
          }
        });
        pendingDeltas = await writer.finish();
      } catch (err) {
        stop();
        await writer.close().catch(() => undefined);
        span.fail(err, err instanceof UpstreamError ? String(err.status) : undefined);
        if (admission)
          await policy
            .settle(admission, {
              inputTokens: 0,
              outputTokens: 0,
              status: err instanceof UpstreamError ? err.status || 502 : 500,
            })
            .catch((e: unknown) => deps.logger.warn({ err: e }, 'settling a failed model call failed'));
        throw modelFailure(err);
      }
      stop();
      const toolCalls = [...calls.values()].map((c) => ({ ...c, arguments: c.arguments || '{}' }));
      const used = usage ?? { input_tokens: 0, output_tokens: 0 };
      span.end({
        inputTokens: used.input_tokens,
        outputTokens: used.output_tokens,
        finishReasons: [finish],
        ...(admission?.price
          ? { costUsd: costUsd(admission.price, used.input_tokens, used.output_tokens) }
          : {}),
        output: text,
      });
      if (admission)
        await policy
          .settle(admission, {
            inputTokens: used.input_tokens,
            outputTokens: used.output_tokens,
            status: 200,
          })
          .catch((err: unknown) => deps.logger.warn({ err }, 'settling a model call failed'));

      const result = stepResult(plan, runTools, text, toolCalls);
      const final = result.kind === 'final';
      const structured =
        plan.schema && final && !toolCalls.length ? validateStructured(plan.schema.schema, text) : undefined;
      const output: DbRun['output'] = final
        ? { role: 'assistant', content: text, ...(structured?.ok ? { structured: structured.value } : {}) }
        : null;
      const turnCalls = final && step > 1 ? (await runCalls(db, runId)).toolCalls : [];
      // What readers have not been sent yet goes out with the answer, in order.
      const events: StepEvent[] = [...pendingDeltas];
      events.push({
        type: 'message.completed',
        data: {
          step,
          role: 'assistant',
          content: text,
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
          ...(structured?.ok ? { structured: structured.value } : {}),
          ...(result.kind === 'invalid_output' ? { invalid: true, errors: result.errors } : {}),
        },
        key: `${step}.completed`,
      });
      for (const call of toolCalls)
        events.push({
          type: 'tool_call.created',
          data: { step, id: call.id, name: call.name, arguments: call.arguments },
          key: `${step}.tool.${call.id}.created`,
        });
      // Readers learn of the end with the answer: same statement.
      if (final) events.push({ type: 'run.completed', data: { status: 'completed', output }, key: 'final' });
      await storeStep(db, {
        runId,
        threadId: plan.thread_id,
        stepKey,
        message: {
          content: text,
          tool_calls: toolCalls.length ? toolCalls : null,
          usage: used,
          prompt_version_id: plan.prompt_version_id,
          trace_id: run.trace_id,
          hidden: result.kind === 'invalid_output',
          metadata: { step, finish_reason: finish, model: plan.model.model_id },
        },
        usage: used,
        reported: usage !== undefined,
        final: final ? { output, toolCalls: turnCalls } : undefined,
        correction:
          result.kind === 'invalid_output'
            ? {
                stepKey: `${step}.correction`,
                content: `Your answer does not match the required JSON schema: ${result.errors.join('; ')}. Answer again with only JSON that matches the schema.`,
              }
            : undefined,
        events,
      });
      return result;
    },

    /**
     * Answers the step's calls that have no result yet without running them
     * (the turn is ending: `reason` says why), so the transcript stays well-formed.
     * Also what a turn recorded before agent tools replays (no reason).
     */
    async runToolCalls(runId: string, step: number, reason?: string): Promise<{ ran: number }> {
      const { plan } = await loadPlan(runId);
      const assistant = await db('messages')
        .where({ run_id: runId, step_key: `${step}.assistant` })
        .first<{ tool_calls: ToolCall[] | null } | undefined>('tool_calls');
      let answered = 0;
      for (const call of assistant?.tool_calls ?? []) {
        const stored = await storeToolResult(db, {
          runId,
          threadId: plan.thread_id,
          step,
          call,
          // Without a reason: a turn from before agent tools, whose calls had no tools to run.
          output: reason ? `not run: ${reason}` : `tool "${call.name}" is not available to this agent`,
          isError: true,
        });
        if (stored) answered++;
      }
      return { ran: answered };
    },

    ...createToolActivities(deps),

    /** Records the turn's outcome on the run and announces it; a second call changes nothing. */
    async finishTurn(args: FinishTurnArgs): Promise<void> {
      await db.transaction((trx) => closeRun(trx, args));
    },
  };

  /** The run's tool calls with their results, and its last visible answer. */
  async function runCalls(
    trx: Db | Knex.Transaction,
    runId: string,
  ): Promise<{ toolCalls: Array<Record<string, unknown>>; lastAnswer: string | undefined }> {
    const messages = await trx('messages').where({ run_id: runId }).orderBy('seq').select<
      Array<{
        role: string;
        content: unknown;
        tool_calls: ToolCall[] | null;
        tool_call_id: string | null;
        hidden: boolean;
        metadata: { is_error?: boolean } | null;
        step_key: string | null;
      }>
    >('role', 'content', 'tool_calls', 'tool_call_id', 'hidden', 'metadata', 'step_key');
    // Results by step and call id: a provider may reuse call ids across steps.
    const results = new Map(messages.filter((m) => m.role === 'tool').map((m) => [m.step_key, m] as const));
    const toolCalls = messages
      .filter((m) => m.role === 'assistant')
      .flatMap((m) => {
        const step = (m.step_key ?? '').split('.')[0];
        return (m.tool_calls ?? []).map((c) => {
          const r = results.get(`${step}.tool.${c.id}`);
          return {
            id: c.id,
            name: c.name,
            arguments: c.arguments,
            step: Number(step),
            ...(r ? { output: messageText(r.content), is_error: Boolean(r.metadata?.is_error) } : {}),
          };
        });
      });
    const last = messages.filter((m) => m.role === 'assistant' && !m.hidden).at(-1);
    return { toolCalls, lastAnswer: last ? messageText(last.content) : undefined };
  }

  /**
   * The run's outcome and its terminal event, in the caller's transaction:
   * status, output (the last visible answer, parsed when the agent has a
   * schema), every tool call with its result, usage. No-op on a finished run.
   */
  async function closeRun(trx: Knex.Transaction, args: FinishTurnArgs): Promise<void> {
    const run = await trx('runs').where({ id: args.runId }).forUpdate().first<DbRun | undefined>();
    if (!run || isTerminal(run.status)) return;
    const plan = run.plan as unknown as TurnPlan | null;
    const { toolCalls, lastAnswer } = await runCalls(trx, run.id);
    let output: DbRun['output'] = null;
    if (args.status === 'completed') {
      const content = lastAnswer ?? '';
      output = { role: 'assistant', content };
      if (plan?.schema) {
        const checked = validateStructured(plan.schema.schema, content);
        if (checked.ok) output.structured = checked.value;
      }
    }
    await trx('runs')
      .where({ id: run.id })
      .update({
        status: args.status,
        output: output ? JSON.stringify(output) : null,
        tool_calls: JSON.stringify(toolCalls),
        error: args.error ? JSON.stringify(args.error) : null,
        finished_at: trx.fn.now(),
      });
    if (args.status === 'completed')
      await appendRunEvent(
        trx,
        run.id,
        'run.completed',
        { status: 'completed', usage: run.usage, output },
        'final',
      );
    else
      await appendRunEvent(
        trx,
        run.id,
        'run.failed',
        { status: 'failed', error: args.error, usage: run.usage },
        'final',
      );
  }

  /** Text this step already streamed to readers in earlier attempts (since its last restart). */
  async function priorText(runId: string, step: number): Promise<string> {
    const rows = await db('run_events')
      .where({ run_id: runId })
      .whereIn('type', ['message.delta', 'message.restarted'])
      .whereRaw(`(data->>'step')::int = ?`, [step])
      .orderBy('seq')
      .select<Array<{ type: string; data: { text?: string } }>>('type', 'data');
    let text = '';
    for (const r of rows) text = r.type === 'message.restarted' ? '' : text + (r.data.text ?? '');
    return text;
  }
}

function stepResult(plan: TurnPlan, tools: RunTools, text: string, toolCalls: ToolCall[]): ModelStepResult {
  if (toolCalls.length)
    return {
      kind: 'tool_calls',
      count: toolCalls.length,
      maxIterations: plan.max_iterations,
      calls: planToolCalls(tools, toolCalls),
      approvalTimeoutMs: plan.approval_timeout_ms ?? null,
    };
  if (plan.schema) {
    const checked = validateStructured(plan.schema.schema, text);
    if (!checked.ok) return { kind: 'invalid_output', errors: checked.errors };
  }
  return { kind: 'final' };
}

export type SessionActivities = ReturnType<typeof createSessionActivities>;
