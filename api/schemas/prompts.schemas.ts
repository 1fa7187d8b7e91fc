import Joi from 'joi';
import { name, optionalProjectQuery, pagination, projectQuery, timestamp, uuid } from './common.schemas.js';

import { PROMPT_LABELS, type PromptLabel } from '../../core/repositories/types.js';
export { PROMPT_LABELS, type PromptLabel } from '../../core/repositories/types.js';

/** Templates are capped at 1 MiB of UTF-8. */
export const MAX_TEMPLATE_BYTES = 1024 * 1024;

const template = Joi.string().max(MAX_TEMPLATE_BYTES, 'utf8');
const commitMessage = Joi.string().max(10_000);
const label = Joi.string().valid(...PROMPT_LABELS);
const version = Joi.number().integer().min(1).max(2_147_483_647);

const nameParams = Joi.object({ name: name.required() });
const versionParams = Joi.object({ name: name.required(), version: version.required() });
const scopeQuery = Joi.object({ ...optionalProjectQuery });

export const promptCreate = {
  query: Joi.object({ ...projectQuery }),
  body: Joi.object({
    name: name.required(),
    template: template.required(),
    commit_message: commitMessage.required(),
    label,
  }).required(),
};

export const promptList = { query: Joi.object({ ...projectQuery, ...pagination }) };

export const promptByName = { query: Joi.object({ ...optionalProjectQuery, name: name.required() }) };

export const promptDelete = { params: nameParams, query: scopeQuery };

export const versionCreate = {
  params: nameParams,
  query: scopeQuery,
  body: Joi.object({
    template: template.required(),
    commit_message: commitMessage.required(),
    label,
  }).required(),
};

export const versionList = {
  params: nameParams,
  query: Joi.object({ ...optionalProjectQuery, ...pagination }),
};

export const versionGet = { params: versionParams, query: scopeQuery };

export const versionUpdate = {
  params: versionParams,
  query: scopeQuery,
  body: Joi.object({ label: label.required() }).required(),
};

export const labelHistory = {
  params: nameParams,
  query: Joi.object({ ...optionalProjectQuery, ...pagination }),
};

export interface PromptCreateBody {
  name: string;
  template: string;
  commit_message: string;
  label?: PromptLabel;
}
export type VersionCreateBody = Omit<PromptCreateBody, 'name'>;
export interface VersionUpdateBody {
  label: PromptLabel;
}
export interface NameParams {
  name: string;
}
export interface VersionParams {
  name: string;
  version: number;
}
export interface ScopeQuery {
  project_id?: string;
}

/** A prompt by name, with what agents and clients need to refer to it (docs/interface.md#prompts). */
export interface Prompt {
  id: string;
  project_id: string;
  name: string;
  latest_version: number;
  /** Version number each label sits on; `production` is null until assigned. */
  labels: { production: number | null; latest: number };
  created_at: string;
  updated_at: string;
}

/** A prompt version (docs/interface.md#prompts). */
export interface PromptVersion {
  id: string;
  prompt_id: string;
  name: string;
  version: number;
  template: string;
  /** `production` when the version holds both labels, null when it holds none. */
  label: PromptLabel | null;
  labels: PromptLabel[];
  variables: string[];
  commit_message: string;
  created_at: string;
}

export const promptResponse = Joi.object({
  id: uuid,
  project_id: uuid,
  name: Joi.string(),
  latest_version: Joi.number().integer(),
  labels: Joi.object({ production: Joi.number().integer().allow(null), latest: Joi.number().integer() }),
  created_at: timestamp,
  updated_at: timestamp,
});
export const promptListResponse = Joi.array().items(promptResponse);

export const versionResponse = Joi.object({
  id: uuid,
  prompt_id: uuid,
  name: Joi.string(),
  version: Joi.number().integer(),
  template: Joi.string(),
  label: Joi.string()
    .valid(...PROMPT_LABELS)
    .allow(null),
  labels: Joi.array().items(Joi.string().valid(...PROMPT_LABELS)),
  variables: Joi.array().items(Joi.string()).description('Variables the template uses, in first-use order'),
  commit_message: Joi.string(),
  created_at: timestamp,
});
export const versionListResponse = Joi.array().items(versionResponse);

/** One move of a prompt's label (docs/interface.md#prompts). */
export interface LabelMove {
  label: string;
  from_version: number | null;
  to_version: number;
  moved_by: string;
  moved_at: string;
}

export const labelMoveResponse = Joi.object({
  label: Joi.string().description('The label moved (`production`: the one that is assigned)'),
  from_version: Joi.number()
    .integer()
    .allow(null)
    .description('The version it left; null for its first assignment'),
  to_version: Joi.number().integer().description('The version it moved to'),
  moved_by: Joi.string().description(
    'The credential that moved it: "admin token" (ADMIN_TOKEN), "local" (no credential, loopback)',
  ),
  moved_at: timestamp,
});
export const labelHistoryResponse = Joi.array().items(labelMoveResponse);
