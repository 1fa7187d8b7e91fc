import Joi from 'joi';
import { conversationId } from '../../schemas/conversations.schemas.js';
import { MAX_DELAY_SECONDS } from '../../services/delayed-turns.service.js';
import { projectParam, protocolBody } from './door.js';

/** The stream modes rendered (others a client may ask for, such as `custom` or `debug`, yield nothing). */
export const STREAM_MODES = [
  'values',
  'updates',
  'messages',
  'messages-tuple',
  'events',
  'debug',
  'custom',
  'tasks',
  'checkpoints',
] as const;
export type StreamMode = (typeof STREAM_MODES)[number];
export const MULTITASK = ['reject', 'enqueue', 'interrupt', 'rollback'] as const;
export type MultitaskStrategy = (typeof MULTITASK)[number];

const inputMessage = Joi.object({
  type: Joi.string(),
  role: Joi.string(),
  content: Joi.alternatives()
    .try(Joi.string(), Joi.array().items(Joi.object().unknown(true)))
    .required(),
  id: Joi.string().allow(null),
}).unknown(true);

export const runCreate = protocolBody({
  assistant_id: Joi.string().min(1).max(200).required(),
  input: Joi.object({ messages: Joi.array().items(inputMessage).max(100) })
    .unknown(true)
    .allow(null),
  command: Joi.object({ resume: Joi.any(), update: Joi.any(), goto: Joi.any() }).unknown(true).allow(null),
  metadata: Joi.object().unknown(true).allow(null),
  config: Joi.object().unknown(true).allow(null),
  context: Joi.object().unknown(true).allow(null),
  stream_mode: Joi.alternatives().try(
    Joi.string().valid(...STREAM_MODES),
    Joi.array().items(Joi.string().valid(...STREAM_MODES)),
  ),
  stream_resumable: Joi.boolean(),
  multitask_strategy: Joi.string()
    .valid(...MULTITASK)
    .allow(null),
  if_not_exists: Joi.string().valid('create', 'reject').allow(null),
  after_seconds: Joi.number().min(0).max(MAX_DELAY_SECONDS).allow(null),
  webhook: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .max(2048)
    .allow(null),
  on_disconnect: Joi.string().valid('cancel', 'continue').allow(null),
  on_completion: Joi.string().valid('delete', 'keep').allow(null),
});

export interface RunCreateBody {
  assistant_id: string;
  input?: { messages?: Array<{ type?: string; role?: string; content: unknown; id?: string | null }> } | null;
  command?: { resume?: unknown } | null;
  metadata?: Record<string, unknown> | null;
  config?: Record<string, unknown> | null;
  context?: Record<string, unknown> | null;
  stream_mode?: StreamMode | StreamMode[];
  stream_resumable?: boolean;
  multitask_strategy?: MultitaskStrategy | null;
  if_not_exists?: 'create' | 'reject' | null;
  after_seconds?: number | null;
  webhook?: string | null;
  on_disconnect?: 'cancel' | 'continue' | null;
  on_completion?: 'delete' | 'keep' | null;
}

export const threadParams = Joi.object({ ...projectParam, thread_id: conversationId.required() });
export const runParams = Joi.object({
  ...projectParam,
  thread_id: conversationId.required(),
  run_id: Joi.string().guid().required(),
});
export const statelessRunParams = Joi.object({ ...projectParam, run_id: Joi.string().guid().required() });
export const projectOnly = Joi.object({ ...projectParam });

export const listQuery = Joi.object({
  limit: Joi.number().integer().min(1).max(1000).default(10),
  offset: Joi.number().integer().min(0).default(0),
  status: Joi.string().valid('pending', 'running', 'error', 'success', 'timeout', 'interrupted'),
}).unknown(true);

export const cancelQuery = Joi.object({
  wait: Joi.boolean().truthy('1').falsy('0').default(false),
  action: Joi.string().valid('interrupt', 'rollback').default('interrupt'),
}).unknown(true);

export const joinStreamQuery = Joi.object({
  cancel_on_disconnect: Joi.boolean().truthy('1').falsy('0').default(false),
  stream_mode: Joi.alternatives().try(
    Joi.string().valid(...STREAM_MODES),
    Joi.array().items(Joi.string().valid(...STREAM_MODES)),
  ),
}).unknown(true);

export const runResponse = Joi.object({
  run_id: Joi.string(),
  thread_id: Joi.string(),
  assistant_id: Joi.string(),
  created_at: Joi.string(),
  updated_at: Joi.string(),
  status: Joi.string().valid('pending', 'running', 'error', 'success', 'timeout', 'interrupted'),
  metadata: Joi.object().unknown(true),
  multitask_strategy: Joi.string().allow(null),
  kwargs: Joi.object().unknown(true),
}).unknown(true);

export interface RunParams {
  project_id: string;
  thread_id: string;
  run_id: string;
}

export const runBatch = Joi.array().items(runCreate).min(1).max(100);
