import Joi from 'joi';
import type { ScopeBudget } from '../../core/budgets/types.js';
import { scopeBudget } from './budget.schemas.js';
import { name, optionalProjectQuery, pagination, projectQuery, timestamp, uuid } from './common.schemas.js';
import { VARIABLE_NAME } from '../../core/prompts/prompt-template.js';
import { MESSAGE_ROLES } from '../../core/repositories/types.js';
import { RUN_STATUSES, type RunStatus } from '../../core/db/tables/index.js';

/** Client-chosen conversation ids: 1–128 characters of `[A-Za-z0-9._:-]`. */
export const conversationId = Joi.string()
  .min(1)
  .max(128)
  .pattern(/^[A-Za-z0-9._:-]+$/)
  .messages({ 'string.pattern.base': 'conversation id may only contain letters, digits and . _ : -' });

export const MAX_CONTEXT_BYTES = 256 * 1024;

// Template variables kept for later turns: keys are variable names, values any JSON.
export const context = Joi.object()
  .pattern(VARIABLE_NAME, Joi.any())
  .custom((value: unknown, helpers) =>
    Buffer.byteLength(JSON.stringify(value)) > MAX_CONTEXT_BYTES
      ? helpers.message({ custom: `context must be at most ${MAX_CONTEXT_BYTES} bytes of JSON` })
      : value,
  )
  .description('Template variables for the agent prompt; keys are variable names, values any JSON');

const namespace = name.description('Free-form grouping, e.g. a tenant or channel');
const idParams = Joi.object({ conversation_id: conversationId.required() });
const scopeQuery = Joi.object({ ...optionalProjectQuery });

export const conversationCreate = {
  query: Joi.object({ ...projectQuery }),
  body: Joi.object({
    id: conversationId.description('Chosen by the client; a UUID is generated when absent'),
    namespace,
    context,
    budget: scopeBudget,
  }).required(),
};

export const conversationList = {
  query: Joi.object({
    ...projectQuery,
    namespace,
    agent_id: uuid.description('Only conversations with a thread of this agent'),
    ...pagination,
  }),
};

export const conversationGet = { params: idParams, query: scopeQuery };

export const conversationUpdate = {
  params: idParams,
  query: scopeQuery,
  body: Joi.object({
    namespace,
    context: context.description('Replaces the stored context'),
    budget: scopeBudget,
  })
    .min(1)
    .required(),
};

export const conversationDelete = { params: idParams, query: scopeQuery };

export const conversationFork = {
  params: idParams,
  query: scopeQuery,
  body: Joi.object({
    at_message_id: uuid.description(
      'The last message copied (inclusive); the whole transcript when absent. A message of another conversation is a 400.',
    ),
    conversation_id: conversationId.description(
      "The new conversation's id; a UUID is generated when absent (an existing one is a 409)",
    ),
    agent_id: uuid.description(
      "Whose thread is copied when several agents spoke in the conversation (else 400 naming agent_id); defaults to at_message_id's thread",
    ),
  }).default({}),
};

export const threadList = { params: idParams, query: Joi.object({ ...optionalProjectQuery, ...pagination }) };

export const messageList = {
  params: Joi.object({ id: uuid.required() }),
  query: Joi.object({
    ...optionalProjectQuery,
    after: uuid.description('Id of the last message already seen; the page starts after it'),
    limit: pagination.limit,
  }),
};

export interface ConversationCreateBody {
  id?: string;
  namespace?: string;
  context?: Record<string, unknown>;
  budget?: ScopeBudget | null;
}
export type ConversationUpdateBody = Omit<ConversationCreateBody, 'id'>;
export interface ConversationForkBody {
  at_message_id?: string;
  conversation_id?: string;
  agent_id?: string;
}
export type { ConversationFilter, Message } from '../../core/repositories/types.js';
export interface ConversationParams {
  conversation_id: string;
}
export interface MessagePage {
  project_id?: string;
  after?: string;
  limit: number;
}

/** A conversation with its project and context (docs/interface.md#conversations-threads-and-messages). */
export interface Conversation {
  id: string;
  project_id: string;
  namespace: string;
  context: Record<string, unknown>;
  budget: ScopeBudget | null;
  created_at: string;
  updated_at: string;
}

/** A conversation in the list: with its latest run and what its runs cost. */
export interface ConversationListItem extends Conversation {
  last_run: {
    run_id: string;
    agent_id: string | null;
    agent_name: string | null;
    status: RunStatus;
    created_at: string;
  } | null;
  run_count: number;
  cost_usd: number | null;
}

export interface Thread {
  id: string;
  conversation_id: string;
  agent_id: string | null;
  created_at: string;
  updated_at: string;
}

export { MESSAGE_ROLES } from '../../core/repositories/types.js';

export const conversationResponse = Joi.object({
  id: Joi.string(),
  project_id: uuid,
  namespace: Joi.string(),
  context: Joi.object().unknown(true),
  budget: scopeBudget,
  created_at: timestamp,
  updated_at: timestamp,
});
export const conversationWithSessionsResponse = conversationResponse.keys({
  workflow_id: Joi.string()
    .allow(null)
    .description(
      "The most recently active session's Temporal workflow id (`session/<agent_id>/<conversation_id>`)",
    ),
  temporal_ui_url: Joi.string()
    .allow(null)
    .description('Where an operator sees that workflow in the Temporal UI'),
  sessions: Joi.array().items(
    Joi.object({ agent_id: uuid, thread_id: uuid, workflow_id: Joi.string(), temporal_ui_url: Joi.string() }),
  ),
});
export const conversationListResponse = Joi.array().items(
  conversationResponse.keys({
    last_run: Joi.object({
      run_id: uuid,
      agent_id: uuid.allow(null),
      agent_name: Joi.string()
        .allow(null)
        .description("The agent's name (at the run's start if it was deleted)"),
      status: Joi.string().valid(...RUN_STATUSES),
      created_at: timestamp,
    })
      .allow(null)
      .description('The latest turn: which agent took it and how it stands; null before the first'),
    run_count: Joi.number().integer().description('Turns (runs) of the conversation'),
    cost_usd: Joi.number()
      .allow(null)
      .description(
        "What its runs cost, summed as each run's `cost_usd` counts it; null when none has a price",
      ),
  }),
);

export const threadListResponse = Joi.array().items(
  Joi.object({
    id: uuid,
    conversation_id: Joi.string(),
    agent_id: uuid.allow(null),
    created_at: timestamp,
    updated_at: timestamp,
  }),
);

export const summaryList = {
  params: Joi.object({ id: uuid.required() }),
  query: Joi.object({ ...optionalProjectQuery }),
};

/** A summary of a thread's earlier messages (the LLM summarizer writes them as a conversation grows). */
export interface ThreadSummary {
  id: string;
  thread_id: string;
  run_id: string | null;
  through_message_id: string | null;
  content: string;
  usage: Record<string, unknown> | null;
  created_at: string;
}

export const summaryListResponse = Joi.array().items(
  Joi.object({
    id: uuid,
    thread_id: uuid,
    run_id: uuid.allow(null).description('The run whose turn wrote it'),
    through_message_id: uuid
      .allow(null)
      .description(
        "The last message it stands for: in the model's context it replaces the messages up to it",
      ),
    content: Joi.string(),
    usage: Joi.object().unknown(true).allow(null).description('Tokens the summarizer used'),
    created_at: timestamp,
  }),
);

export const messageListResponse = Joi.array().items(
  Joi.object({
    id: uuid,
    thread_id: uuid,
    role: Joi.string().valid(...MESSAGE_ROLES),
    content: Joi.any().description('Text, or an array of content parts'),
    tool_calls: Joi.array()
      .items(Joi.object().unknown(true))
      .description('Present on assistant messages that call tools'),
    tool_call_id: Joi.string().description('Present on tool results'),
    usage: Joi.object().unknown(true).description('Token usage of the model call that produced the message'),
    created_at: timestamp,
  }),
);
