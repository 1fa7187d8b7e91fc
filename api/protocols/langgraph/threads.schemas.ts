import Joi from 'joi';
import { conversationId } from '../../schemas/conversations.schemas.js';
import { projectParam, protocolBody } from './door.js';

export const THREAD_STATUSES = ['idle', 'busy', 'interrupted', 'error'] as const;

const metadata = Joi.object().unknown(true);
const limit = Joi.number().integer().min(1).max(1000);
const offset = Joi.number().integer().min(0);

export const threadParams = Joi.object({ ...projectParam, thread_id: conversationId.required() });
export const checkpointParams = Joi.object({
  ...projectParam,
  thread_id: conversationId.required(),
  checkpoint_id: Joi.string().max(64).required(),
});
export const projectOnly = Joi.object({ ...projectParam });

export const threadCreate = protocolBody({
  thread_id: conversationId,
  metadata,
  if_exists: Joi.string().valid('raise', 'do_nothing').default('raise'),
});

export const threadSearch = protocolBody({
  metadata,
  values: Joi.object().unknown(true),
  status: Joi.string().valid(...THREAD_STATUSES),
  ids: Joi.array().items(conversationId).max(1000),
  limit: limit.default(10),
  offset: offset.default(0),
  sort_by: Joi.string()
    .valid('thread_id', 'status', 'created_at', 'updated_at', 'state_updated_at')
    .default('created_at'),
  sort_order: Joi.string().valid('asc', 'desc').default('desc'),
});

export const threadCount = protocolBody({
  metadata,
  values: Joi.object().unknown(true),
  status: Joi.string().valid(...THREAD_STATUSES),
});

export const threadPatch = protocolBody({ metadata });

export const historyQuery = Joi.object({ limit: limit.default(10), before: Joi.string().max(64) }).unknown(
  true,
);
export const historyBody = protocolBody({
  limit: limit.default(10),
  before: Joi.alternatives().try(
    Joi.string().max(64),
    Joi.object({ checkpoint_id: Joi.string() }).unknown(true),
  ),
});
export const stateCheckpointBody = protocolBody({
  checkpoint: Joi.object({ checkpoint_id: Joi.string().max(64).required() })
    .unknown(true)
    .required(),
});

export interface ThreadParams {
  project_id: string;
  thread_id: string;
}
export interface ThreadSearchBody {
  metadata?: Record<string, unknown>;
  status?: (typeof THREAD_STATUSES)[number];
  ids?: string[];
  limit: number;
  offset: number;
  sort_by: 'thread_id' | 'status' | 'created_at' | 'updated_at' | 'state_updated_at';
  sort_order: 'asc' | 'desc';
}

/** For the OpenAPI document: the protocol's Thread and ThreadState. */
export const threadResponse = Joi.object({
  thread_id: Joi.string(),
  created_at: Joi.string(),
  updated_at: Joi.string(),
  metadata: Joi.object().unknown(true),
  status: Joi.string().valid(...THREAD_STATUSES),
  values: Joi.object({ messages: Joi.array().items(Joi.object().unknown(true)) }).unknown(true),
  interrupts: Joi.object().unknown(true),
}).unknown(true);
export const threadStateResponse = Joi.object({
  values: Joi.object().unknown(true),
  next: Joi.array().items(Joi.string()),
  tasks: Joi.array().items(Joi.object().unknown(true)),
  checkpoint: Joi.object().unknown(true),
  parent_checkpoint: Joi.object().unknown(true).allow(null),
  metadata: Joi.object().unknown(true),
  created_at: Joi.string().allow(null),
}).unknown(true);
