import Joi from 'joi';

export const uuid = Joi.string().guid({
  version: ['uuidv1', 'uuidv4', 'uuidv5', 'uuidv7', 'uuidv8'],
  separator: '-',
});

export const idParams = Joi.object({ id: uuid.required() });

export const name = Joi.string().trim().min(1).max(200);

export const description = Joi.string().max(10_000).allow('', null);

/** `limit` (default 50, max 200) and `offset`; lists are newest first. */
export const pagination = {
  limit: Joi.number().integer().min(1).max(200).default(50),
  offset: Joi.number().integer().min(0).max(1_000_000).default(0),
};

export interface Page {
  limit: number;
  offset: number;
}

/** `?project_id=` on create and list of project-scoped resources. */
export const projectQuery = { project_id: uuid.required() };
/** `?project_id=` optional on get/update/delete by id (must match when given). */
export const optionalProjectQuery = { project_id: uuid };

/** Timestamps as they appear in responses. */
export const timestamp = Joi.string().isoDate();
