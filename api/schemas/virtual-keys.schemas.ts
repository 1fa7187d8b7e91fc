import Joi from 'joi';
import { idParams, name, pagination, timestamp, uuid } from './common.schemas.js';
import type { DbVirtualKey } from '../../core/db/tables/index.js';
import type { Grant } from '../../core/repositories/types.js';

export const BUDGET_PERIODS = ['day', 'week', 'month', 'total'] as const;

/** A model id as the provider knows it; `*` alone grants every model of the provider. */
const modelName = Joi.string().trim().min(1).max(200);
const grant = Joi.object({
  provider_id: uuid.required(),
  model_names: Joi.array().items(modelName).min(1).max(1000).unique().required(),
});
const grants = Joi.array().items(grant).max(100).unique('provider_id');

// `<provider name>/<model id>`; model ids may themselves contain slashes (OpenRouter).
const fallback = Joi.string()
  .max(300)
  .pattern(/^[a-z0-9][a-z0-9_-]{0,62}\/\S.*$/, '<provider name>/<model id>');

const futureDate = Joi.string()
  .isoDate()
  .custom((value: string, helpers) =>
    Date.parse(value) > Date.now() ? value : helpers.message({ custom: '{{#label}} must be in the future' }),
  );

const rateLimit = Joi.object({
  requests_per_minute: Joi.number().integer().min(1).max(10_000_000),
  tokens_per_minute: Joi.number().integer().min(1).max(10_000_000_000),
})
  .min(1)
  .allow(null);

const budget = Joi.object({
  max_usd: Joi.number().min(0).max(1e9).required(),
  period: Joi.string()
    .valid(...BUDGET_PERIODS)
    .required(),
}).allow(null);

const fields = {
  name,
  expires_at: futureDate.allow(null),
  rate_limit: rateLimit,
  budget,
  fallbacks: Joi.array().items(fallback).max(20).unique(),
};

export const virtualKeyCreate = {
  body: Joi.object({ ...fields, name: name.required(), providers: grants.required() }).required(),
};
export const virtualKeyList = { query: Joi.object({ ...pagination }) };
export const virtualKeyGet = { params: idParams };
export const virtualKeyUpdate = {
  params: idParams,
  body: Joi.object({ ...fields, providers: grants })
    .min(1)
    .required(),
};
export const virtualKeyRotate = { params: idParams };
export const virtualKeyDelete = { params: idParams };

export type { Grant } from '../../core/repositories/types.js';
export interface VirtualKeyCreateBody {
  name: string;
  providers: Grant[];
  expires_at?: string | null;
  rate_limit?: DbVirtualKey['rate_limit'];
  budget?: DbVirtualKey['budget'];
  fallbacks?: string[];
}
export type VirtualKeyUpdateBody = Partial<VirtualKeyCreateBody>;

/** What the API returns for a virtual key; `secret_key` only in the create and rotate responses. */
export interface VirtualKey {
  id: string;
  name: string;
  key_prefix: string;
  providers: Grant[];
  expires_at: string | null;
  rate_limit: DbVirtualKey['rate_limit'];
  budget: DbVirtualKey['budget'];
  fallbacks: string[];
  created_at: string;
  updated_at: string;
}
export type VirtualKeyWithSecret = VirtualKey & { secret_key: string };

const grantResponse = Joi.object({
  provider_id: uuid,
  model_names: Joi.array()
    .items(Joi.string())
    .description('model ids as the provider knows them; ["*"] = all'),
});
const virtualKeyFields = {
  id: uuid,
  name: Joi.string(),
  key_prefix: Joi.string().description('first 10 characters of the secret, to recognise it'),
  providers: Joi.array().items(grantResponse),
  expires_at: timestamp.allow(null),
  rate_limit: Joi.object({
    requests_per_minute: Joi.number().integer(),
    tokens_per_minute: Joi.number().integer(),
  }).allow(null),
  budget: Joi.object({ max_usd: Joi.number(), period: Joi.string().valid(...BUDGET_PERIODS) }).allow(null),
  fallbacks: Joi.array().items(Joi.string()).description('ordered `<provider name>/<model id>` list'),
  created_at: timestamp,
  updated_at: timestamp,
};
export const virtualKeyResponse = Joi.object(virtualKeyFields);
export const virtualKeyWithSecretResponse = Joi.object({
  ...virtualKeyFields,
  secret_key: Joi.string().description('shown once: `sk-vk-` + 32 random bytes, base64url'),
});
export const virtualKeyListResponse = Joi.array().items(virtualKeyResponse);
