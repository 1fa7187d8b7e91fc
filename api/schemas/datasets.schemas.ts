import Joi from 'joi';
import type { DatasetInput } from '../../core/db/tables/index.js';
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
import { context } from './conversations.schemas.js';
import { converseRequest } from './converse.schemas.js';

/** The most a row may be, as JSON. */
export const MAX_ROW_BYTES = 1024 * 1024;
/** The most rows one request may add (a create or an upload). */
export const MAX_ROWS_PER_UPLOAD = 10_000;

/** The content types of a JSON-lines upload: one row per line. */
export const JSONL_TYPES = ['application/x-ndjson', 'application/jsonl'];

/** A user message exactly as converse takes it (text, or text and image parts). */
const input = (converseRequest.body.extract('message') as Joi.AlternativesSchema).description(
  'The user message: text, or content parts as converse takes them (`{type: "text", text}`, `{type: "image_url", image_url: {url}}`)',
);

/** One row; the whole row at most MAX_ROW_BYTES of JSON. */
export const datasetRow = Joi.object({
  input,
  context: context.description("Template variables, as a conversation's `context`"),
  expected_output: Joi.any().description('What a good answer is: text or any JSON value'),
})
  .custom((value: unknown, helpers) =>
    Buffer.byteLength(JSON.stringify(value)) > MAX_ROW_BYTES
      ? helpers.message({ custom: `a row must be at most ${MAX_ROW_BYTES} bytes of JSON` })
      : value,
  )
  .description('One case: the input, the context it is given in, and what a good answer is');

const rows = Joi.array()
  .items(datasetRow)
  .max(MAX_ROWS_PER_UPLOAD)
  .messages({ 'array.max': `at most ${MAX_ROWS_PER_UPLOAD} rows may be added at once` });

const scopeQuery = Joi.object({ ...optionalProjectQuery });
const rowParams = Joi.object({ id: uuid.required(), row_id: uuid.required() });

export const datasetCreate = {
  query: Joi.object({ ...projectQuery }),
  body: Joi.object({
    name: name.required(),
    description,
    rows: rows.description(`Rows to start with (at most ${MAX_ROWS_PER_UPLOAD})`),
  }).required(),
};

export const datasetList = { query: Joi.object({ ...projectQuery, ...pagination }) };

export const datasetGet = { params: idParams, query: scopeQuery };

export const datasetUpdate = {
  params: idParams,
  query: scopeQuery,
  body: Joi.object({ name, description }).min(1).required(),
};

export const datasetDelete = { params: idParams, query: scopeQuery };

export const datasetRowsAdd = {
  params: idParams,
  query: scopeQuery,
  body: Joi.object({
    rows: rows.min(1).required().description(`The rows to add, in order (1 to ${MAX_ROWS_PER_UPLOAD})`),
  }).required(),
};

export const datasetRowsList = {
  params: idParams,
  query: Joi.object({ ...optionalProjectQuery, ...pagination }),
};

export const datasetRowDelete = { params: rowParams, query: scopeQuery };

/** One row as a request gives it. */
export interface DatasetRowBody {
  input: DatasetInput;
  context?: Record<string, unknown>;
  expected_output?: unknown;
}

export interface DatasetCreateBody {
  name: string;
  description?: string | null;
  rows?: DatasetRowBody[];
}
export type DatasetUpdateBody = Partial<Pick<DatasetCreateBody, 'name' | 'description'>>;
export interface DatasetRowsBody {
  rows: DatasetRowBody[];
}

/** What the API returns for a dataset. */
export interface Dataset {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  row_count: number;
  created_at: string;
  updated_at: string;
}

/** What the API returns for a row. */
export interface DatasetRow {
  id: string;
  dataset_id: string;
  input: DatasetInput;
  context: Record<string, unknown> | null;
  expected_output: unknown;
  created_at: string;
}

export const datasetResponse = Joi.object({
  id: uuid,
  project_id: uuid,
  name: Joi.string(),
  description: Joi.string().allow(null),
  row_count: Joi.number().integer().description('How many rows the dataset holds'),
  created_at: timestamp,
  updated_at: timestamp.description('Changed by an update and by rows added or deleted'),
});
export const datasetListResponse = Joi.array().items(datasetResponse);

export const datasetRowResponse = Joi.object({
  id: uuid,
  dataset_id: uuid,
  input: Joi.alternatives().try(Joi.string(), Joi.array().items(Joi.object().unknown(true))),
  context: Joi.object().unknown(true).allow(null),
  expected_output: Joi.any().description('null when the row has none'),
  created_at: timestamp,
});
export const datasetRowListResponse = Joi.array().items(datasetRowResponse);

export const datasetRowsAddResponse = Joi.object({
  dataset_id: uuid,
  added: Joi.number().integer().description('Rows this request added'),
  row_count: Joi.number().integer().description('Rows the dataset holds now'),
});
