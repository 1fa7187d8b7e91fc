/**
 * An agent as the Agent Protocol shows an assistant: `graph_id` is the agent
 * it was copied from, or its own id (every agent is the assistant of its own
 * graph). Also the graph and schemas every agent shares: the loop the
 * session runs (model, then tools, until the model answers).
 */
import type { DbAgentVersion } from '../../../core/db/tables/index.js';

/** What an assistant is made from: an agent row, or an agent as our API presents it. */
export interface AgentLike {
  id: string;
  name: string;
  description: string | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  version: number;
  graph_id: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface Assistant {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  version: number;
  created_at: string;
  updated_at?: string;
}

const iso = (d: Date | string) => (typeof d === 'string' ? d : d.toISOString());
const obj = (v: unknown) =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

export function assistantOf(a: AgentLike): Assistant {
  return {
    assistant_id: a.id,
    graph_id: a.graph_id ?? a.id,
    name: a.name,
    description: a.description,
    config: a.config,
    context: a.context,
    metadata: a.metadata,
    version: a.version,
    created_at: iso(a.created_at),
    updated_at: iso(a.updated_at),
  };
}

/** One version of an agent as the assistant it was then (a version has no `updated_at`). */
export function assistantVersionOf(v: DbAgentVersion): Assistant {
  const s = v.snapshot;
  return {
    assistant_id: v.agent_id,
    graph_id: typeof s.graph_id === 'string' ? s.graph_id : v.agent_id,
    name: typeof s.name === 'string' ? s.name : '',
    description: typeof s.description === 'string' ? s.description : null,
    config: obj(s.config),
    context: obj(s.context),
    metadata: obj(s.metadata),
    version: v.version,
    created_at: iso(v.created_at),
  };
}

/** Keeps only the fields a search's `select` names (all of them without one). */
export function selected(a: Assistant, select: string[] | null | undefined): Partial<Assistant> {
  if (!select?.length) return a;
  return Object.fromEntries(Object.entries(a).filter(([k]) => select.includes(k)));
}

const node = (id: string) =>
  id.startsWith('__')
    ? { id, type: 'schema', data: id }
    : { id, type: 'runnable', data: { id: ['agent_server', 'session', id], name: id } };

/** The session's loop as a drawable graph: the model step, then tools when it calls some, until it answers. */
export const AGENT_GRAPH = {
  nodes: ['__start__', 'agent', 'tools', '__end__'].map(node),
  edges: [
    { source: '__start__', target: 'agent' },
    { source: 'agent', target: 'tools', conditional: true },
    { source: 'agent', target: '__end__', conditional: true },
    { source: 'tools', target: 'agent' },
  ],
};

const message = {
  type: 'object',
  properties: {
    type: { type: 'string', description: 'human, ai, tool or system' },
    content: {
      oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }],
    },
    id: { type: 'string' },
    name: { type: 'string' },
    tool_calls: { type: 'array', items: { type: 'object' } },
    tool_call_id: { type: 'string' },
  },
  required: ['content'],
};

const messagesState = (title: string) => ({
  $schema: 'http://json-schema.org/draft-07/schema#',
  title,
  type: 'object',
  properties: { messages: { type: 'array', items: message } },
  required: ['messages'],
});

/** The assistant's schemas: a conversation of messages in and out; its context's variables. */
export function assistantSchemas(a: AgentLike) {
  const variables = Object.fromEntries(Object.keys(a.context).map((k) => [k, {}]));
  return {
    graph_id: a.graph_id ?? a.id,
    input_schema: messagesState('Input'),
    output_schema: messagesState('Output'),
    state_schema: messagesState('State'),
    config_schema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      title: 'Config',
      type: 'object',
      properties: {
        tags: { type: 'array', items: { type: 'string' } },
        recursion_limit: { type: 'integer' },
        configurable: { type: 'object' },
      },
    },
    context_schema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      title: 'Context',
      description: "Template variables for the agent's prompts",
      type: 'object',
      properties: variables,
      additionalProperties: true,
    },
  };
}
