import Joi from 'joi';
import { description, idParams, name, pagination, timestamp, uuid } from './common.schemas.js';

/** Optional; `null` clears it. Must name an existing virtual key (400 otherwise). */
const virtualKeyId = uuid.allow(null);

/** Off unless turned on; OTEL_RECORD_CONTENT=true records content for every project whatever this says. */
const recordContent = Joi.boolean().description(
  "record prompts, completions, tool arguments and results on this project's turn spans " +
    '(deleted with the conversation, the project, or by trace retention); default false',
);

export const projectCreate = {
  body: Joi.object({
    name: name.required(),
    description,
    virtual_key_id: virtualKeyId,
    record_content: recordContent,
  }).required(),
};

export const projectList = {
  query: Joi.object({ ...pagination }),
};

export const projectGet = { params: idParams };

export const projectUpdate = {
  params: idParams,
  body: Joi.object({ name, description, virtual_key_id: virtualKeyId, record_content: recordContent })
    .min(1)
    .required(),
};

export const projectDelete = { params: idParams };

export interface ProjectCreateBody {
  name: string;
  description?: string | null;
  virtual_key_id?: string | null;
  record_content?: boolean;
}
export type ProjectUpdateBody = Partial<ProjectCreateBody>;

/** What the API returns for a project. */
export interface Project {
  id: string;
  name: string;
  description: string | null;
  virtual_key_id: string | null;
  record_content: boolean;
  created_at: string;
  updated_at: string;
}

export const projectResponse = Joi.object({
  id: uuid,
  name: Joi.string(),
  description: Joi.string().allow(null),
  virtual_key_id: uuid.allow(null),
  record_content: Joi.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});
export const projectListResponse = Joi.array().items(projectResponse);
