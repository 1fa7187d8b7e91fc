/**
 * The Agent Protocol's store requests and answers (what `@langchain/langgraph-sdk`'s
 * `client.store` sends and reads). Unknown body fields are accepted, as the
 * protocol's bodies are; a bad namespace label is a 422 naming the field.
 */
import Joi from 'joi';
import { NAMESPACE_LABEL_RULE, validLabel } from '../../../core/memory/namespace.js';
import { projectParam, protocolBody } from './door.js';

const label = Joi.string()
  .pattern(/^[^.]*$/)
  .messages({ 'string.empty': NAMESPACE_LABEL_RULE, 'string.pattern.base': NAMESPACE_LABEL_RULE });
const namespace = Joi.array().items(label);
const key = Joi.string().max(1024);
const page = (max: number, dflt: number) => ({
  limit: Joi.number().integer().min(1).max(max).default(dflt),
  offset: Joi.number().integer().min(0).default(0),
});

/** `a.b` as the SDK's getItem sends it; empty: the root namespace. */
const dottedNamespace = Joi.string()
  .allow('')
  .custom((value: string, helpers) => {
    const labels = value === '' ? [] : value.split('.');
    return labels.every(validLabel) ? labels : helpers.message({ custom: NAMESPACE_LABEL_RULE });
  });

const params = Joi.object(projectParam);

export const putItem = {
  params,
  body: protocolBody({
    namespace: namespace.min(1).required(),
    key: key.required(),
    value: Joi.object().unknown(true).required(),
    index: Joi.alternatives(Joi.boolean().valid(false), Joi.array().items(Joi.string().min(1)))
      .allow(null)
      .description(
        'false: not embedded; a list of fields (dotted paths) to embed; null: the project default',
      ),
    ttl: Joi.number().positive().allow(null).description('minutes to live; null: for ever'),
  }).required(),
};

export const getItem = {
  params,
  query: Joi.object({
    namespace: dottedNamespace.default([]),
    key: key.required(),
    refresh_ttl: Joi.boolean(),
  }).unknown(true),
};

export const deleteItem = {
  params,
  body: protocolBody({ namespace: namespace.default([]), key: key.required() }).required(),
};

export const searchItems = {
  params,
  body: protocolBody({
    namespace_prefix: namespace.default([]),
    filter: Joi.object().unknown(true).allow(null),
    ...page(1000, 10),
    query: Joi.string().allow('', null).max(10_000),
    refresh_ttl: Joi.boolean().allow(null),
  }).required(),
};

/** Prefix and suffix take `*` for any label. */
export const listNamespaces = {
  params,
  body: protocolBody({
    prefix: namespace.allow(null),
    suffix: namespace.allow(null),
    max_depth: Joi.number().integer().min(1).allow(null),
    ...page(1000, 100),
  }).required(),
};

export interface PutItemBody {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  index?: false | string[] | null;
  ttl?: number | null;
}
export interface SearchItemsBody {
  namespace_prefix: string[];
  filter?: Record<string, unknown> | null;
  limit: number;
  offset: number;
  query?: string | null;
  refresh_ttl?: boolean | null;
}
export interface ListNamespacesBody {
  prefix?: string[] | null;
  suffix?: string[] | null;
  max_depth?: number | null;
  limit: number;
  offset: number;
}

const item = {
  namespace: Joi.array().items(Joi.string()),
  key: Joi.string(),
  value: Joi.object().unknown(true),
  created_at: Joi.string().isoDate(),
  updated_at: Joi.string().isoDate(),
};
export const itemResponse = Joi.object(item).allow(null);
export const searchResponse = Joi.object({
  items: Joi.array().items(
    Joi.object({
      ...item,
      score: Joi.number().allow(null).description('cosine similarity to the query (semantic search only)'),
    }),
  ),
});
export const namespacesResponse = Joi.object({
  namespaces: Joi.array().items(Joi.array().items(Joi.string())),
});
