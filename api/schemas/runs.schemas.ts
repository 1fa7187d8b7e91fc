import Joi from 'joi';
import {
  idParams,
  oneOrMore,
  optionalProjectQuery,
  pagination,
  projectQuery,
  timeWindow,
  timestamp,
  uuid,
} from './common.schemas.js';
import { CANCEL_ACTIONS, type CancelAction } from '../../workflows/session.definitions.js';
import { conversationId } from './conversations.schemas.js';
import { RUN_STATUSES, runResponse, type RunView } from './converse.schemas.js';
import { RUN_SOURCES, type RunSource } from '../../core/db/tables/index.js';
import {
  INPUT_ACTIONS,
  TOOL_DECISION_ACTIONS,
  type InputAction,
  type ToolDecisionAction,
} from '../../workflows/session.definitions.js';

export type RunStatus = (typeof RUN_STATUSES)[number];
export { RUN_SOURCES, type RunSource };

export const RUN_STATISTICS_GROUPS = ['source', 'status', 'agent'] as const;
export type RunStatisticsGroup = (typeof RUN_STATISTICS_GROUPS)[number];

/** `GET /runs/statistics` */
export const runStatistics = {
  query: Joi.object({
    ...projectQuery,
    group_by: Joi.string()
      .valid(...RUN_STATISTICS_GROUPS)
      .default('source')
      .description('what each row counts: runs of one source (default), one status, or one agent'),
    agent_id: uuid.description('Only runs of this agent'),
    source: oneOrMore(RUN_SOURCES).description('Only runs from these sources'),
    ...timeWindow,
  }),
};

export interface RunStatisticsQuery {
  project_id: string;
  group_by: RunStatisticsGroup;
  agent_id?: string;
  source?: RunSource[];
  start_time?: Date;
  end_time?: Date;
}

export const runStatisticsResponse = Joi.array().items(
  Joi.object({
    source: Joi.string()
      .valid(...RUN_SOURCES)
      .description('With group_by=source'),
    status: Joi.string()
      .valid(...RUN_STATUSES)
      .description('With group_by=status'),
    agent_id: uuid.allow(null).description('With group_by=agent; null for runs of agents deleted since'),
    runs: Joi.number().integer().description('Runs created in the window'),
    completed: Joi.number().integer(),
    failed: Joi.number().integer(),
    cancelled: Joi.number().integer(),
    input_tokens: Joi.number().integer(),
    output_tokens: Joi.number().integer(),
    cost_usd: Joi.number().description("Summed over the runs' priced model calls"),
    p50_duration_ms: Joi.number()
      .allow(null)
      .description('Median time from start to end of the runs that ended; null when none did'),
  }),
);

const listFilters = {
  status: oneOrMore(RUN_STATUSES),
  source: oneOrMore(RUN_SOURCES).description(
    'Only runs that came from these sources (comma-separated or repeated): ' + RUN_SOURCES.join(', '),
  ),
  ...timeWindow,
  ...pagination,
};

export const projectRunList = {
  query: Joi.object({
    ...projectQuery,
    agent_id: uuid.description('Only runs of this agent'),
    ...listFilters,
  }),
};

export const conversationRunList = {
  params: Joi.object({ conversation_id: conversationId.required() }),
  query: Joi.object({ ...optionalProjectQuery, ...listFilters }),
};

export const agentRunList = {
  params: idParams,
  query: Joi.object({ ...optionalProjectQuery, ...listFilters }),
};

export interface RunListQuery {
  status?: RunStatus[];
  source?: RunSource[];
  start_time?: Date;
  end_time?: Date;
  limit: number;
  offset: number;
}

export const runListResponse = Joi.array().items(runResponse);

export const approvalInbox = {
  query: Joi.object({
    ...projectQuery,
    agent_id: uuid.description('Only runs of this agent'),
    ...pagination,
  }),
};

const waitingCall = Joi.object({
  id: Joi.string().description('The call id to pass in approved_call_ids or rejected_call_ids'),
  name: Joi.string().allow(null).description('The tool name the model called'),
  arguments: Joi.string().allow(null).description('The arguments as the model sent them (JSON text)'),
  step: Joi.number().integer().description("The turn's model step that asked for it"),
  kind: Joi.string().allow(null).description('mcp or sandbox'),
  server: Joi.string().description('MCP server name, for MCP tools'),
  tool: Joi.string().description("The tool's name on its MCP server"),
}).unknown(true);

export const approvalInboxResponse = Joi.array().items(
  Joi.object({
    run_id: uuid,
    project_id: uuid,
    agent_id: uuid.allow(null),
    agent_name: Joi.string().allow(null),
    conversation_id: Joi.string(),
    thread_id: uuid,
    message_id: Joi.string(),
    since: timestamp.allow(null).description('When the run paused'),
    timeout_at: timestamp
      .allow(null)
      .description("When the undecided calls are declined by themselves (the agent's approval_timeout_ms)"),
    calls: Joi.array().items(waitingCall).description('The tool calls waiting for a decision'),
    decided: Joi.array()
      .items(Joi.object().unknown(true))
      .description(
        'Decisions already taken at this pause (some calls of a step may be decided before others)',
      ),
    trace_id: Joi.string().allow(null),
    workflow_id: Joi.string(),
    temporal_ui_url: Joi.string().allow(null),
    created_at: timestamp,
  }),
);

export interface PendingApproval {
  run_id: string;
  project_id: string;
  agent_id: string | null;
  agent_name: string | null;
  conversation_id: string;
  thread_id: string;
  message_id: string;
  since: string | null;
  timeout_at: string | null;
  calls: Array<Record<string, unknown>>;
  decided: Array<Record<string, unknown>>;
  trace_id: string | null;
  workflow_id: string;
  temporal_ui_url: string | null;
  created_at: string;
}

export type { RunView };

export const runCancel = {
  params: Joi.object({ run_id: uuid.required() }),
  query: Joi.object({ ...optionalProjectQuery }),
  body: Joi.object({
    action: Joi.string()
      .valid(...CANCEL_ACTIONS)
      .required()
      .description(
        '`interrupt`: keep what the turn produced so far (tool calls without a result are answered "cancelled"); ' +
          '`rollback`: remove its messages, summaries and events from the conversation, as if it had not happened',
      ),
  }),
};

export interface CancelBody {
  action: CancelAction;
}

export const runBudget = {
  params: Joi.object({ run_id: uuid.required() }),
  query: Joi.object({ ...optionalProjectQuery }),
  body: Joi.object({
    action: Joi.string()
      .valid('resume', 'cancel')
      .required()
      .description(
        '`resume`: try the waiting call again now (409 while it still does not fit; the run keeps waiting); ' +
          '`cancel`: end the run `cancelled`, keeping what it produced',
      ),
  }).required(),
};

export interface BudgetBody {
  action: 'resume' | 'cancel';
}

export const runDecision = {
  params: Joi.object({ run_id: uuid.required() }),
  query: Joi.object({ ...optionalProjectQuery }),
  body: Joi.object({
    action: Joi.string()
      .valid(...TOOL_DECISION_ACTIONS)
      .required()
      .description(
        '`retry`: call the tool again (its side effect may happen twice); `supply`: answer the call with `result`',
      ),
    result: Joi.object({
      output: Joi.string().max(1_000_000).allow('').required().description('What the call answers the model'),
      is_error: Joi.boolean().default(false),
    }).when('action', {
      is: 'supply',
      then: Joi.required(),
      otherwise: Joi.forbidden(),
    }),
  }).required(),
};

export const runInput = {
  params: Joi.object({ run_id: uuid.required() }),
  query: Joi.object({ ...optionalProjectQuery }),
  body: Joi.object({
    action: Joi.string()
      .valid(...INPUT_ACTIONS)
      .required()
      .description(
        '`accept` with `content`; `decline` or `cancel` tell the server the person would not answer',
      ),
    content: Joi.object()
      .unknown(true)
      .when('action', { is: 'accept', otherwise: Joi.forbidden() })
      .description(
        "accept: the answer, validated against the question's requested_schema (fields left out take its defaults)",
      ),
  }).required(),
};

export interface InputBody {
  action: InputAction;
  content?: Record<string, unknown>;
}

export interface DecisionBody {
  action: ToolDecisionAction;
  result?: { output: string; is_error: boolean };
}
