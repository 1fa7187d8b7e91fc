import Joi from 'joi';
import { name, optionalProjectQuery, projectQuery, timestamp, uuid } from './common.schemas.js';
import { context as templateContext, conversationId } from './conversations.schemas.js';
import { modelCreate } from './models.schemas.js';
import { RUN_SOURCES, RUN_STATUSES, type RunOverrides } from '../../core/db/tables/index.js';
import { webhookUrl } from './webhooks.schemas.js';

/** The same sampling parameters a Model takes (checked the same way; other keys go to the provider). */
const modelParameters = modelCreate.body.extract('parameters') as Joi.ObjectSchema;

/** A user message: at most this many bytes of text (or of JSON, for content parts). */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

const textPart = Joi.object({
  type: Joi.string().valid('text').required(),
  text: Joi.string().allow('').required(),
});
const imagePart = Joi.object({
  type: Joi.string().valid('image_url').required(),
  image_url: Joi.object({
    url: Joi.string()
      .required()
      .pattern(/^(https?:\/\/|data:image\/[a-z0-9.+-]+;base64,)/i)
      .messages({ 'string.pattern.base': 'image_url.url must be an http(s) URL or a base64 data:image URL' }),
  }).required(),
});

export const converseMessage = Joi.alternatives()
  .try(
    Joi.string().min(1),
    Joi.array()
      .items(
        Joi.alternatives().conditional('.type', { is: 'image_url', then: imagePart, otherwise: textPart }),
      )
      .min(1),
  )
  .required()
  .custom((value: unknown, helpers) =>
    Buffer.byteLength(typeof value === 'string' ? value : JSON.stringify(value)) > MAX_MESSAGE_BYTES
      ? helpers.message({ custom: `message must be at most ${MAX_MESSAGE_BYTES} bytes` })
      : value,
  )
  .description('Text, or content parts: `{type: "text", text}` and `{type: "image_url", image_url: {url}}`');

export const messageId = Joi.string()
  .min(1)
  .max(128)
  .pattern(/^[A-Za-z0-9._:-]+$/)
  .messages({ 'string.pattern.base': 'message_id may only contain letters, digits and . _ : -' });

/**
 * This turn only, without changing the agent or moving a prompt label: ids
 * must belong to the request's project (400 naming the field otherwise).
 */
const overrides = Joi.object({
  prompt_version_id: uuid.description(
    "A version of any prompt of the project, instead of the one the agent's label points at",
  ),
  model_id: uuid.description("A model of the project (with a provider), instead of the agent's"),
  parameters: modelParameters.description("Model parameters, merged over the model's own `parameters`"),
})
  .min(1)
  .description(
    "Run this turn with another prompt version, model or parameters than the agent's; shown as the run's `overrides`",
  );

export const converseRequest = {
  query: Joi.object({ ...projectQuery }),
  body: Joi.object({
    agent_id: uuid.required(),
    conversation_id: conversationId.description(
      'Absent: a new conversation. Unknown: created under this id. Known: the next turn of it.',
    ),
    namespace: name.description('For a new conversation; an existing one keeps its own'),
    message: converseMessage,
    message_id: messageId.description('Idempotency key, unique per conversation; generated when absent'),
    context: templateContext.description(
      "Template variables, merged into the conversation's stored context (later turns keep them)",
    ),
    stream: Joi.boolean().description('Answer as Server-Sent Events (also with `Accept: text/event-stream`)'),
    overrides,
    end_user_id: Joi.string()
      .min(1)
      .max(200)
      .description(
        'The person this turn acts for: an MCP server configured with per-user tokens is called with theirs ' +
          '(POST /mcp-servers/{id}/authorize with this end_user_id)',
      ),
    webhook: webhookUrl.description(
      "A one-off endpoint for this run's events (run.paused, run.completed, run.failed, run.cancelled), " +
        'signed with a secret made for this run: `webhook_secret` in the answer (the `Webhook-Secret` header ' +
        'when streaming)',
    ),
  }).required(),
};

export interface ConverseBody {
  agent_id: string;
  conversation_id?: string;
  namespace?: string;
  message: string | Array<Record<string, unknown>>;
  message_id?: string;
  context?: Record<string, unknown>;
  stream?: boolean;
  overrides?: RunOverrides;
  end_user_id?: string;
  webhook?: string;
}

export const runGet = {
  params: Joi.object({ run_id: uuid.required() }),
  query: Joi.object({ ...optionalProjectQuery }),
};

export const runEvents = {
  params: Joi.object({ run_id: uuid.required() }),
  query: Joi.object({
    ...optionalProjectQuery,
    after: Joi.number()
      .integer()
      .min(0)
      .description('Resume after this event id (the `Last-Event-ID` header wins)'),
  }),
};

const callIds = Joi.array().items(Joi.string().min(1).max(200)).max(100).unique().default([]);

export const runApprovals = {
  params: Joi.object({ run_id: uuid.required() }),
  query: Joi.object({ ...optionalProjectQuery }),
  body: Joi.object({
    approved_call_ids: callIds.description('Tool calls to run'),
    rejected_call_ids: callIds.description('Tool calls to decline: the model is told "declined by user"'),
    wait: Joi.boolean()
      .default(false)
      .description(
        'Answer when the turn has ended or paused again (at most CONVERSE_WAIT_TIMEOUT_MS), not at once',
      ),
  }),
};

export interface ApprovalsBody {
  approved_call_ids: string[];
  rejected_call_ids: string[];
  wait: boolean;
}

export { RUN_STATUSES };

/** Why a run waits: `{reason, since, timeout_at, details}` while its status is `awaiting_<reason>`. */
export const pauseResponse = Joi.object({
  reason: Joi.string().valid('approval', 'budget', 'decision', 'authorization', 'input'),
  since: timestamp.allow(null).description('When the run paused'),
  timeout_at: timestamp
    .allow(null)
    .description(
      "When the wait ends by itself: the agent's approval_timeout_ms declines what is undecided, " +
        'budget_wait_timeout_ms cancels the run, decision_timeout_ms fails the call',
    ),
  details: Joi.object({
    pending_call_ids: Joi.array()
      .items(Joi.string())
      .description('approval: the tool calls still waiting for a decision'),
    scope: Joi.string()
      .valid('agent', 'conversation', 'key')
      .description('budget: whose budget the call did not fit in'),
    id: Joi.string().description("budget: the agent's, the conversation's or the key's id"),
    period: Joi.string().description('budget: its period'),
    max_usd: Joi.number(),
    max_tokens: Joi.number().allow(null),
    spent_usd: Joi.number().description("budget: what the period's runs spent"),
    spent_tokens: Joi.number(),
    reserved_usd: Joi.number().description('budget: what calls in flight hold'),
    needed_usd: Joi.number().description("budget: the waiting call's worst case"),
    needed_tokens: Joi.number(),
    resets_at: timestamp
      .allow(null)
      .description('budget: when its next period begins and the run tries again'),
    call_id: Joi.string().description('decision: the tool call whose outcome is unknown'),
    name: Joi.string().description('decision: the tool the model called'),
    arguments: Joi.string().allow(null),
    server_id: uuid.description('authorization: the MCP server that wants OAuth authorization'),
    server_name: Joi.string(),
    end_user_id: Joi.string().allow(null).description('authorization: the person whose token it wants'),
    authorization_url: Joi.string().description(
      'authorization: the URL a person opens to authorize (POST /mcp-servers/{id}/authorize makes a fresh one)',
    ),
    mode: Joi.string().valid('form', 'url').description('input: a form to fill, or a page to open'),
    message: Joi.string().description("input: the MCP server's question"),
    requested_schema: Joi.object()
      .unknown(true)
      .description('input (form): the JSON Schema of the answer (POST /runs/{id}/input)'),
    url: Joi.string().description('input (url): the page the person opens'),
  }).unknown(true),
});

export const runResponse = Joi.object({
  run_id: uuid,
  project_id: uuid,
  agent_id: uuid.allow(null),
  agent_name: Joi.string().allow(null),
  conversation_id: Joi.string(),
  thread_id: uuid,
  message_id: Joi.string(),
  status: Joi.string().valid(...RUN_STATUSES),
  output: Joi.object({
    role: Joi.string().valid('assistant'),
    content: Joi.string(),
    structured: Joi.any().description("The answer parsed and validated against the agent's schema"),
  }).allow(null),
  tool_calls: Joi.array().items(Joi.object().unknown(true)),
  usage: Joi.object({
    input_tokens: Joi.number().integer().description("Every prompt token of the turn's model calls"),
    output_tokens: Joi.number().integer(),
    cache_read_tokens: Joi.number()
      .integer()
      .description('Of input_tokens, read from the prompt cache; present once a call reported some'),
    cache_write_tokens: Joi.number()
      .integer()
      .description('Of input_tokens, written to the prompt cache; present once a call reported some'),
  }),
  model: Joi.string().allow(null).description('The provider-side model id the turn called'),
  cost_usd: Joi.number()
    .allow(null)
    .description(
      "What the run's model calls cost (summaries included), each at its model's price (its Model's `pricing`, " +
        'else the shipped list price): the figures on their spans and in the usage endpoints. Runs stored ' +
        "before costs were recorded show their tokens at today's price. Null when no price is known.",
    ),
  error: Joi.object({ code: Joi.string(), message: Joi.string(), details: Joi.any() }).allow(null),
  warnings: Joi.array().items(Joi.string()),
  prompt_version_id: uuid.allow(null),
  agent_version: Joi.number()
    .integer()
    .allow(null)
    .description(
      'The version of its agent the turn ran with (GET /agents/{id}/versions); null until the turn starts',
    ),
  overrides: Joi.object({
    prompt_version_id: uuid,
    model_id: uuid,
    parameters: Joi.object().unknown(true),
  })
    .allow(null)
    .description(
      "What this turn was asked to run with instead of the agent's configuration (converse `overrides`)",
    ),
  rolled_back: Joi.boolean().description(
    "Cancelled with `rollback`: the run's messages, summaries and events were removed from the conversation",
  ),
  door: Joi.string()
    .valid('api', 'langgraph')
    .description('The door the message came through: `api` (converse) or `langgraph` (the Agent Protocol)'),
  source: Joi.string()
    .valid(...RUN_SOURCES)
    .description(
      'Where the run came from: `rest` (converse), `langgraph` (the Agent Protocol), `mcp` (the MCP server), ' +
        "`a2a`, `cron`, `eval` (a replay) or `sub_agent` (a parent agent's turn)",
    ),
  parent_run_id: uuid
    .allow(null)
    .description("A sub-agent's run (source `sub_agent`): the run whose tool call started it"),
  sub_agent_runs: Joi.array()
    .items(
      Joi.object({
        run_id: uuid,
        agent_id: uuid.allow(null),
        agent_name: Joi.string().allow(null),
        conversation_id: Joi.string(),
        status: Joi.string().valid(...RUN_STATUSES),
        created_at: timestamp,
        finished_at: timestamp.allow(null),
      }),
    )
    .description(
      'GET /runs/{run_id} of a run that called sub-agents: the runs its calls started (each in a conversation of its own), oldest first',
    ),
  trace_id: Joi.string().allow(null),
  workflow_id: Joi.string(),
  temporal_ui_url: Joi.string().allow(null),
  tools: Joi.object()
    .unknown(true)
    .allow(null)
    .description(
      'What the model could see this turn: offered tools (and their MCP server), servers listed, the sandbox tool and why',
    ),
  pending_approvals: Joi.array()
    .items(Joi.object().unknown(true))
    .description('While status is awaiting_approval: the tool calls waiting for a decision'),
  approvals: Joi.array()
    .items(Joi.object().unknown(true))
    .description("Decisions taken on this run's tool calls: id, step, decision, by (user or timeout), at"),
  pause: pauseResponse
    .allow(null)
    .description('While the run waits for someone: why, since when, until when'),
  created_at: timestamp,
  started_at: timestamp.allow(null).description('When a worker began the turn'),
  finished_at: timestamp.allow(null),
  duration_ms: Joi.number()
    .integer()
    .allow(null)
    .description('From created_at to finished_at (waits included); null until the run ends'),
  first_token_ms: Joi.number()
    .allow(null)
    .description(
      "From created_at to the turn's first output (streamed text, or a tool call); null before it " +
        'and once the run events are pruned (RUN_EVENTS_RETENTION_DAYS)',
    ),
  approval_wait_ms: Joi.number()
    .allow(null)
    .description(
      'Time spent paused for approval, every pause of the turn (a pause under way counts until now); ' +
        'null when it never paused, or once the run events are pruned',
    ),
});

export type { RunPause, RunView } from '../../core/runs/run-view.js';

/** The converse answer: the run, and the secret of its one-off `webhook` when the request named one. */
export const converseResponse = runResponse.keys({
  webhook_secret: Joi.string().description(
    "The secret signing this run's one-off `webhook` deliveries (Standard Webhooks `whsec_…`); " +
      'answered again to a retry with the same message_id, never shown by GET /runs',
  ),
});
