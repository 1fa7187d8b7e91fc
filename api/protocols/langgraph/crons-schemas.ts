import Joi from 'joi';
import {
  CRON_OVERLAP_POLICIES,
  CRON_RUN_COMPLETED,
  type CronOverlapPolicy,
  type CronRunCompleted,
} from '../../../core/db/tables/index.js';
import type { CronSortBy } from '../../../core/repositories/crons.repository.js';
import { conversationId } from '../../schemas/conversations.schemas.js';
import { projectParam, protocolBody } from './door.js';

export const CRON_SELECT_FIELDS = [
  'cron_id',
  'assistant_id',
  'thread_id',
  'end_time',
  'schedule',
  'created_at',
  'updated_at',
  'user_id',
  'payload',
  'next_run_date',
  'metadata',
  'timezone',
  'enabled',
  'overlap_policy',
  'on_run_completed',
] as const;
export type CronSelectField = (typeof CRON_SELECT_FIELDS)[number];

const metadata = Joi.object().unknown(true);
const assistantId = Joi.string().min(1).max(200);
const schedule = Joi.string()
  .min(1)
  .max(200)
  .description('Cron expression (five fields) or @hourly, @daily …');
const timezone = Joi.string().min(1).max(100).allow(null).description('IANA time zone name; default UTC');
const endTime = Joi.string().isoDate().allow(null).description('ISO 8601: no run after it');
const input = Joi.object({ messages: Joi.array().items(Joi.object().unknown(true)).min(1).required() })
  .unknown(true)
  .description('`{messages: [...]}`: the last human message is what each run sends');
const overlapPolicy = Joi.string()
  .valid(...CRON_OVERLAP_POLICIES)
  .description('When a run is due while the previous one still runs; default skip');

const onRunCompleted = Joi.string()
  .valid(...CRON_RUN_COMPLETED)
  .allow(null)
  .description("A stateless cron's thread after each run: delete (default) or keep");

export const projectOnly = Joi.object({ ...projectParam });
export const threadParams = Joi.object({ ...projectParam, thread_id: conversationId.required() });
export const cronParams = Joi.object({ ...projectParam, cron_id: Joi.string().guid().required() });

export const cronCreate = protocolBody({
  assistant_id: assistantId.required(),
  schedule: schedule.required(),
  input: input.required(),
  metadata,
  config: Joi.object().unknown(true).allow(null),
  context: Joi.object().unknown(true).allow(null),
  timezone,
  end_time: endTime,
  enabled: Joi.boolean().allow(null),
  overlap_policy: overlapPolicy,
  on_run_completed: onRunCompleted,
});

export const cronUpdate = protocolBody({
  schedule,
  input,
  metadata,
  config: Joi.object().unknown(true).allow(null),
  context: Joi.object().unknown(true).allow(null),
  timezone,
  end_time: endTime,
  enabled: Joi.boolean().allow(null),
  overlap_policy: overlapPolicy,
  on_run_completed: onRunCompleted,
});

export const cronSearch = protocolBody({
  assistant_id: assistantId.allow(null),
  thread_id: conversationId.allow(null),
  enabled: Joi.boolean().allow(null),
  metadata: metadata.allow(null),
  limit: Joi.number().integer().min(1).max(1000).default(10),
  offset: Joi.number().integer().min(0).default(0),
  sort_by: Joi.string()
    .valid('cron_id', 'assistant_id', 'thread_id', 'created_at', 'updated_at', 'next_run_date')
    .default('created_at'),
  sort_order: Joi.string().valid('asc', 'desc').default('desc'),
  select: Joi.array()
    .items(Joi.string().valid(...CRON_SELECT_FIELDS, 'now'))
    .allow(null),
});

export const cronCount = protocolBody({
  assistant_id: assistantId.allow(null),
  thread_id: conversationId.allow(null),
  enabled: Joi.boolean().allow(null),
  metadata: metadata.allow(null),
});

export const cronResponse = Joi.object({
  cron_id: Joi.string().guid(),
  assistant_id: Joi.string().guid(),
  thread_id: Joi.string().allow(null),
  schedule: Joi.string(),
  timezone: Joi.string(),
  end_time: Joi.string().allow(null),
  next_run_date: Joi.string().allow(null),
  enabled: Joi.boolean(),
  overlap_policy: Joi.string(),
  payload: Joi.object().unknown(true),
  metadata: Joi.object().unknown(true),
  user_id: Joi.any().valid(null),
  created_at: Joi.string(),
  updated_at: Joi.string(),
}).unknown(true);

interface CronFields {
  input?: { messages: Array<Record<string, unknown>> };
  metadata?: Record<string, unknown>;
  config?: Record<string, unknown> | null;
  context?: Record<string, unknown> | null;
  timezone?: string | null;
  end_time?: string | null;
  enabled?: boolean | null;
  overlap_policy?: CronOverlapPolicy;
  on_run_completed?: CronRunCompleted | null;
}
export type CronCreateBody = CronFields & {
  assistant_id: string;
  schedule: string;
  input: NonNullable<CronFields['input']>;
};
export type CronUpdateBody = CronFields & { schedule?: string };
export interface CronSearchBody {
  assistant_id?: string | null;
  thread_id?: string | null;
  enabled?: boolean | null;
  metadata?: Record<string, unknown> | null;
  limit: number;
  offset: number;
  sort_by: CronSortBy;
  sort_order: 'asc' | 'desc';
  select?: string[] | null;
}
export type CronCountBody = Pick<CronSearchBody, 'assistant_id' | 'thread_id' | 'enabled' | 'metadata'>;
