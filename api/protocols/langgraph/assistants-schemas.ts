/** The Agent Protocol's assistants: what its requests carry (joi) and what its answers look like (for the document). */
import Joi from 'joi';
import { uuid } from '../../schemas/common.schemas.js';
import { projectParam, protocolBody } from './door.js';

/** An agent's id, or its name (the protocol's clients name graphs, and assistants, by strings). */
const agentRef = Joi.string().trim().min(1).max(200);
const object = Joi.object().unknown(true);
const limit = Joi.number().integer().min(1).max(1000);
const offset = Joi.number().integer().min(0).max(1_000_000);

export const ASSISTANT_SORTS = ['assistant_id', 'graph_id', 'created_at', 'updated_at', 'name'] as const;

export const projectOnly = Joi.object({ ...projectParam });
export const assistantParams = Joi.object({ ...projectParam, assistant_id: agentRef.required() });
export const subgraphParams = Joi.object({
  ...projectParam,
  assistant_id: agentRef.required(),
  namespace: Joi.string().max(200),
});

export const assistantCreate = protocolBody({
  graph_id: agentRef.required().description("The agent to copy: an agent's id or name in this project"),
  assistant_id: uuid.description('The new agent id; generated when absent'),
  config: object.allow(null),
  context: object.allow(null),
  metadata: object.allow(null),
  if_exists: Joi.string().valid('raise', 'do_nothing').default('raise'),
  name: Joi.string().trim().min(1).max(200).allow(null),
  description: Joi.string().max(10_000).allow('', null),
});

export const assistantPatch = protocolBody({
  graph_id: agentRef
    .allow(null)
    .description("Another agent's id or name: the assistant takes its settings (model, prompt, tools …)"),
  config: object.allow(null),
  context: object.allow(null),
  metadata: object.allow(null).description("Merged into the assistant's metadata"),
  name: Joi.string().trim().min(1).max(200).allow(null),
  description: Joi.string().max(10_000).allow('', null),
});

const filters = {
  metadata: object.allow(null),
  graph_id: agentRef.allow(null),
  name: Joi.string().max(200).allow(null).description('A substring of the name, whatever its case'),
};

export const assistantSearch = protocolBody({
  ...filters,
  limit: limit.default(10),
  offset: offset.default(0),
  sort_by: Joi.string()
    .valid(...ASSISTANT_SORTS)
    .allow(null),
  sort_order: Joi.string().valid('asc', 'desc').allow(null),
  select: Joi.array().items(Joi.string().max(100)).max(20).allow(null),
});

export const assistantCount = protocolBody(filters);

export const assistantVersions = protocolBody({
  limit: limit.default(10),
  offset: offset.default(0),
  metadata: object.allow(null),
});

export const assistantLatest = protocolBody({ version: Joi.number().integer().min(1).required() });

export const deleteQuery = Joi.object({
  delete_threads: Joi.boolean().default(false),
});
export const graphQuery = Joi.object({ xray: Joi.alternatives(Joi.boolean(), Joi.number().integer()) });
export const subgraphQuery = Joi.object({ recurse: Joi.boolean() });

export interface AssistantCreateBody {
  graph_id: string;
  assistant_id?: string;
  config?: Record<string, unknown> | null;
  context?: Record<string, unknown> | null;
  metadata?: Record<string, unknown> | null;
  if_exists: 'raise' | 'do_nothing';
  name?: string | null;
  description?: string | null;
}
export type AssistantPatchBody = Partial<
  Omit<AssistantCreateBody, 'assistant_id' | 'if_exists' | 'graph_id'>
> & {
  graph_id?: string | null;
};
export interface AssistantFilterBody {
  metadata?: Record<string, unknown> | null;
  graph_id?: string | null;
  name?: string | null;
}
export interface AssistantSearchBody extends AssistantFilterBody {
  limit: number;
  offset: number;
  sort_by?: (typeof ASSISTANT_SORTS)[number] | null;
  sort_order?: 'asc' | 'desc' | null;
  select?: string[] | null;
}
export interface AssistantVersionsBody {
  limit: number;
  offset: number;
  metadata?: Record<string, unknown> | null;
}

export const assistantResponse = Joi.object({
  assistant_id: uuid,
  graph_id: uuid.description('The agent this one was copied from, or its own id'),
  name: Joi.string(),
  description: Joi.string().allow(null),
  config: object,
  context: object,
  metadata: object,
  version: Joi.number().integer(),
  created_at: Joi.string().isoDate(),
  updated_at: Joi.string().isoDate(),
});
export const assistantListResponse = Joi.array().items(assistantResponse);
