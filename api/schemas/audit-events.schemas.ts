import Joi from 'joi';
import { pagination, timeWindow, timestamp, uuid } from './common.schemas.js';

/** Who a row's actor is (core/audit/audit-log.ts). */
export const ACTOR_TYPES = [
  'open',
  'admin_token',
  'user',
  'api_token',
  'service',
  'anonymous',
  'scim',
  'setup',
  'system',
];

const filters = {
  actor_id: uuid.description('The user (or, for a service token, the token) that acted'),
  actor_type: Joi.string().valid(...ACTOR_TYPES),
  action: Joi.string()
    .max(200)
    .pattern(/^[a-z0-9_.]+\*?$/, 'an action, or a prefix ending in *')
    .description('Exact (`agent.update`), or a prefix ending in `*` (`agent.*`, `*` for all)'),
  resource_type: Joi.string().max(200),
  resource_id: Joi.string().max(500),
  project_id: uuid.description('Required of a project admin who is not an organisation admin'),
  ...timeWindow,
};

export const auditEventList = { query: Joi.object({ ...filters, ...pagination }) };
export const auditEventExport = { query: Joi.object(filters) };

export type AuditEventQuery = {
  actor_id?: string;
  actor_type?: string;
  action?: string;
  resource_type?: string;
  resource_id?: string;
  project_id?: string;
  start_time?: Date;
  end_time?: Date;
};

const anything = Joi.any().description('The fields as they were (secrets left out), or null');

export const auditEventResponse = Joi.object({
  id: uuid.required(),
  at: timestamp.required(),
  actor_type: Joi.string().required(),
  actor_id: uuid.allow(null).required(),
  actor_name: Joi.string().allow(null).required(),
  action: Joi.string().required(),
  resource_type: Joi.string().allow(null).required(),
  resource_id: Joi.string().allow(null).required(),
  project_id: uuid.allow(null).required(),
  method: Joi.string().allow(null).required(),
  path: Joi.string()
    .allow(null)
    .required()
    .description('The route template; details.path is the path requested'),
  status: Joi.number().integer().allow(null).required(),
  ip: Joi.string().allow(null).required(),
  user_agent: Joi.string().allow(null).required(),
  before: anything,
  after: anything,
  details: anything,
});
export const auditEventListResponse = Joi.array().items(auditEventResponse);
