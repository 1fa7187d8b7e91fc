import Joi from 'joi';
import { CRON_OVERLAP_POLICIES, CRON_RUN_COMPLETED } from '../../core/db/tables/index.js';
import {
  idParams,
  optionalProjectQuery,
  pagination,
  projectQuery,
  timestamp,
  uuid,
} from './common.schemas.js';

export type { CronView } from '../services/crons.service.js';

const scopeQuery = Joi.object({ ...optionalProjectQuery });

export const cronList = {
  query: Joi.object({
    ...projectQuery,
    agent_id: uuid.description('Only the crons of this agent'),
    ...pagination,
  }),
};
export const cronById = { params: idParams, query: scopeQuery };

export const cronResponse = Joi.object({
  id: uuid,
  project_id: uuid,
  agent_id: uuid,
  conversation_id: Joi.string().allow(null).description('Null: each run starts a new conversation'),
  schedule: Joi.string().description('Cron expression (five fields) or @hourly, @daily …'),
  timezone: Joi.string().description('IANA time zone the schedule is read in'),
  end_time: timestamp.allow(null),
  overlap_policy: Joi.string().valid(...CRON_OVERLAP_POLICIES),
  on_run_completed: Joi.string()
    .valid(...CRON_RUN_COMPLETED)
    .allow(null)
    .description("Without a conversation: whether each run's new conversation is deleted once the run ends"),
  paused: Joi.boolean(),
  next_run_date: timestamp.allow(null).description('Null while paused or when no run is left'),
  payload: Joi.object()
    .unknown(true)
    .description('What each run is started with, as the Agent Protocol sent it'),
  metadata: Joi.object().unknown(true),
  schedule_id: Joi.string().description('The Temporal Schedule: `cron/<id>`'),
  temporal_ui_url: Joi.string()
    .allow(null)
    .description('The schedule in the Temporal UI, when TEMPORAL_UI_URL is set'),
  created_at: timestamp,
  updated_at: timestamp,
});
export const cronListResponse = Joi.array().items(cronResponse);
