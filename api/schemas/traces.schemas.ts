import Joi from 'joi';
import { timestamp, uuid } from './common.schemas.js';

/** `start_time`/`end_time` in ISO 8601; both optional (default: the last 24 hours). */
const window = {
  start_time: Joi.string().isoDate(),
  end_time: Joi.string().isoDate(),
};
const shortText = Joi.string().min(1).max(200);
/** The web console marks its own calls (`x-agent-server-client: console`); they are left out unless asked. */
const includeConsole = Joi.boolean()
  .default(false)
  .description(
    "include the web console's own requests (the list shows agent turns started from the console either way)",
  );
const ms = Joi.number().min(0).max(1e12);

export const traceList = {
  query: Joi.object({
    ...window,
    service_name: shortText,
    span_name: shortText.description('substring of any span name in the trace, case-insensitive'),
    min_duration_ms: ms,
    max_duration_ms: ms,
    has_errors: Joi.boolean(),
    project_id: uuid,
    agent_id: shortText,
    conversation_id: shortText,
    include_console: includeConsole,
    limit: Joi.number().integer().min(1).max(1000).default(50),
    offset: Joi.number().integer().min(0).max(1_000_000).default(0),
  }),
};

export const traceGet = {
  params: Joi.object({
    trace_id: Joi.string()
      .pattern(/^[0-9a-f]{32}$/, '32 lowercase hex digits')
      .required(),
  }),
};

const statsPage = {
  limit: Joi.number().integer().min(1).max(1000).default(100),
  offset: Joi.number().integer().min(0).max(1_000_000).default(0),
};

export const endpointStats = {
  query: Joi.object({
    ...window,
    service_name: shortText,
    span_kind: Joi.string().valid('SERVER', 'CLIENT', 'INTERNAL', 'PRODUCER', 'CONSUMER'),
    include_console: includeConsole,
    ...statsPage,
  }),
};

export const serviceStats = { query: Joi.object({ ...window, include_console: includeConsole }) };

export const modelStats = {
  query: Joi.object({ ...window, project_id: uuid, include_console: includeConsole }),
};

export interface Window {
  start_time?: string;
  end_time?: string;
}
export interface ConsoleQuery {
  include_console?: boolean;
}
export interface ServiceStatsQuery extends Window, ConsoleQuery {}
export interface TraceListQuery extends Window, ConsoleQuery {
  service_name?: string;
  span_name?: string;
  min_duration_ms?: number;
  max_duration_ms?: number;
  has_errors?: boolean;
  project_id?: string;
  agent_id?: string;
  conversation_id?: string;
  limit: number;
  offset: number;
}
export interface EndpointStatsQuery extends Window, ConsoleQuery {
  service_name?: string;
  span_kind?: string;
  limit: number;
  offset: number;
}
export interface ModelStatsQuery extends Window, ConsoleQuery {
  project_id?: string;
}

const latency = {
  call_count: Joi.number().integer(),
  error_count: Joi.number().integer(),
  error_rate: Joi.number().description('error_count / call_count, 0..1'),
  avg_ms: Joi.number(),
  p50_ms: Joi.number(),
  p95_ms: Joi.number(),
  p99_ms: Joi.number(),
  max_ms: Joi.number(),
};

export const traceListResponse = Joi.array().items(
  Joi.object({
    trace_id: Joi.string(),
    root_span_name: Joi.string(),
    root_service_name: Joi.string(),
    start_time: timestamp,
    end_time: timestamp,
    duration_ms: Joi.number(),
    span_count: Joi.number().integer(),
    error_count: Joi.number().integer(),
  }),
);

const span = Joi.object({
  trace_id: Joi.string(),
  span_id: Joi.string(),
  parent_span_id: Joi.string().allow(null),
  name: Joi.string(),
  kind: Joi.string(),
  service_name: Joi.string(),
  start_time: timestamp,
  end_time: timestamp,
  duration_ms: Joi.number(),
  status_code: Joi.string().valid('UNSET', 'OK', 'ERROR'),
  status_message: Joi.string().allow(null),
  attributes: Joi.object(),
  events: Joi.array().items(Joi.object()),
});
const treeNode = Joi.object({
  span_id: Joi.string(),
  name: Joi.string(),
  service_name: Joi.string(),
  duration_ms: Joi.number(),
  status_code: Joi.string(),
  children: Joi.array().items(Joi.object().description('a tree node')),
});

export const traceResponse = Joi.object({
  trace_id: Joi.string(),
  spans: Joi.array().items(span),
  tree: Joi.array().items(treeNode).description('spans whose parent is not in the trace are roots'),
});

export const endpointStatsResponse = Joi.array().items(
  Joi.object({ service_name: Joi.string(), span_name: Joi.string(), ...latency }),
);
export const serviceStatsResponse = Joi.array().items(Joi.object({ service_name: Joi.string(), ...latency }));
export const modelStatsResponse = Joi.array().items(
  Joi.object({
    provider: Joi.string().allow(null),
    model: Joi.string(),
    call_count: Joi.number().integer(),
    error_count: Joi.number().integer(),
    input_tokens: Joi.number().integer(),
    output_tokens: Joi.number().integer(),
    cost_usd: Joi.number().allow(null),
    p50_ms: Joi.number(),
    p95_ms: Joi.number(),
  }),
);
