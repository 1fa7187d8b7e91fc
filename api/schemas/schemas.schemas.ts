import Joi from 'joi';
import {
  description,
  idParams,
  name,
  optionalProjectQuery,
  pagination,
  projectQuery,
  timestamp,
  uuid,
} from './common.schemas.js';

/** A JSON Schema document is capped at 1 MiB once serialised, like a prompt template. */
export const MAX_SCHEMA_BYTES = 1024 * 1024;

// Any JSON object: whether it is a valid JSON Schema is ajv's call, in the service.
const jsonSchema = Joi.object()
  .unknown(true)
  .custom((value: unknown, helpers) =>
    Buffer.byteLength(JSON.stringify(value)) > MAX_SCHEMA_BYTES
      ? helpers.message({ custom: `schema must be at most ${MAX_SCHEMA_BYTES} bytes of JSON` })
      : value,
  )
  .description('A JSON Schema (draft 2020-12) object');

const scopeQuery = Joi.object({ ...optionalProjectQuery });

export const schemaCreate = {
  query: Joi.object({ ...projectQuery }),
  body: Joi.object({ name: name.required(), description, schema: jsonSchema.required() }).required(),
};

export const schemaList = { query: Joi.object({ ...projectQuery, ...pagination }) };

export const schemaGet = { params: idParams, query: scopeQuery };

export const schemaUpdate = {
  params: idParams,
  query: scopeQuery,
  body: Joi.object({ name, description, schema: jsonSchema }).min(1).required(),
};

export const schemaDelete = { params: idParams, query: scopeQuery };

export interface SchemaCreateBody {
  name: string;
  description?: string | null;
  schema: Record<string, unknown>;
}
export type SchemaUpdateBody = Partial<SchemaCreateBody>;

/** What the API returns for a schema. */
export interface Schema {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  schema: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export const schemaResponse = Joi.object({
  id: uuid,
  project_id: uuid,
  name: Joi.string(),
  description: Joi.string().allow(null),
  schema: Joi.object().unknown(true),
  created_at: timestamp,
  updated_at: timestamp,
});
export const schemaListResponse = Joi.array().items(schemaResponse);
