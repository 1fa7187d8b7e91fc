import Joi from 'joi';
import { description, idParams, name, pagination, timestamp, uuid } from './common.schemas.js';

/** Optional; `null` clears it. Must name an existing virtual key (400 otherwise). */
const virtualKeyId = uuid.allow(null);

/** Off unless turned on; OTEL_RECORD_CONTENT=true records content for every project whatever this says. */
const recordContent = Joi.boolean().description(
  "record prompts, completions, tool arguments and results on this project's turn spans " +
    '(deleted with the conversation, the project, or by trace retention); default false',
);

/**
 * The memory store's embedding model (the Agent Protocol's `/store`, agents'
 * memory tools): a model of this project whose provider has embeddings;
 * `null` turns semantic search off (queries then match text).
 */
const storeEmbedding = Joi.object({
  model_id: uuid.required().description('a model of this project, served by a provider with embeddings'),
  dims: Joi.number()
    .integer()
    .min(1)
    .max(16_000)
    .allow(null)
    .description("the vectors' size asked of the model (`dimensions`); null: the model's own"),
  fields: Joi.array()
    .items(Joi.string().min(1).max(256))
    .max(32)
    .allow(null)
    .description("the value's fields (dotted paths) embedded when a put names none; null: the whole value"),
})
  .allow(null)
  .description("the model that embeds the project's memory store items; null: search by text only");

export const projectCreate = {
  body: Joi.object({
    name: name.required(),
    description,
    virtual_key_id: virtualKeyId,
    record_content: recordContent,
    store_embedding: storeEmbedding,
  }).required(),
};

export const projectList = {
  query: Joi.object({ ...pagination }),
};

export const projectGet = { params: idParams };

export const projectUpdate = {
  params: idParams,
  body: Joi.object({
    name,
    description,
    virtual_key_id: virtualKeyId,
    record_content: recordContent,
    store_embedding: storeEmbedding,
  })
    .min(1)
    .required(),
};

export const projectDelete = { params: idParams };

export interface ProjectCreateBody {
  name: string;
  description?: string | null;
  virtual_key_id?: string | null;
  record_content?: boolean;
  store_embedding?: StoreEmbeddingSetting | null;
}
export type ProjectUpdateBody = Partial<ProjectCreateBody>;

export interface StoreEmbeddingSetting {
  model_id: string;
  dims?: number | null;
  fields?: string[] | null;
}

/** What the API returns for a project. */
export interface Project {
  id: string;
  name: string;
  description: string | null;
  virtual_key_id: string | null;
  record_content: boolean;
  store_embedding: { model_id: string; dims: number | null; fields: string[] | null } | null;
  created_at: string;
  updated_at: string;
}

export const projectResponse = Joi.object({
  id: uuid,
  name: Joi.string(),
  description: Joi.string().allow(null),
  virtual_key_id: uuid.allow(null),
  record_content: Joi.boolean(),
  store_embedding: Joi.object({
    model_id: uuid,
    dims: Joi.number().integer().allow(null),
    fields: Joi.array().items(Joi.string()).allow(null),
  }).allow(null),
  created_at: timestamp,
  updated_at: timestamp,
});
export const projectListResponse = Joi.array().items(projectResponse);
