import Joi from 'joi';
import { description, idParams, name, pagination, timestamp, uuid } from './common.schemas.js';

export const projectCreate = {
  body: Joi.object({ name: name.required(), description }).required(),
};

export const projectList = {
  query: Joi.object({ ...pagination }),
};

export const projectGet = { params: idParams };

export const projectUpdate = {
  params: idParams,
  body: Joi.object({ name, description }).min(1).required(),
};

export const projectDelete = { params: idParams };

export interface ProjectCreateBody {
  name: string;
  description?: string | null;
}
export type ProjectUpdateBody = Partial<ProjectCreateBody>;

/** What the API returns for a project. */
export interface Project {
  id: string;
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export const projectResponse = Joi.object({
  id: uuid,
  name: Joi.string(),
  description: Joi.string().allow(null),
  created_at: timestamp,
  updated_at: timestamp,
});
export const projectListResponse = Joi.array().items(projectResponse);
