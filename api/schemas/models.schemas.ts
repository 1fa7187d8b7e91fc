import Joi from 'joi';
import {
  idParams,
  name,
  optionalProjectQuery,
  pagination,
  projectQuery,
  timestamp,
  uuid,
} from './common.schemas.js';
import { PROVIDER_TYPES } from './providers.schemas.js';
import type { ProviderType } from '../../core/db/tables/index.js';
import type { Price } from '../../core/metering/pricing.js';

/**
 * The sampling parameters every vendor shares are checked; any other key is
 * passed to the provider as-is (vendors add parameters faster than we could list them).
 */
const parameters = Joi.object({
  temperature: Joi.number().min(0).max(2),
  top_p: Joi.number().min(0).max(1),
  max_tokens: Joi.number().integer().min(1).max(10_000_000),
  presence_penalty: Joi.number().min(-2).max(2),
  frequency_penalty: Joi.number().min(-2).max(2),
  stop: Joi.alternatives().try(
    Joi.string().min(1).max(500),
    Joi.array().items(Joi.string().min(1).max(500)).max(4),
  ),
  seed: Joi.number().integer(),
}).unknown(true);

const rate = Joi.number().min(0).max(1e6);
const CACHE_READ = 'Prompt-cache reads; without it they are charged at the input price';
const CACHE_WRITE =
  'Prompt-cache writes (Anthropic: 1.25× input for 5-minute breakpoints, 2× for 1-hour ones); ' +
  'without it they are charged at the input price';

const pricing = Joi.object({
  input_per_million_usd: rate.required(),
  output_per_million_usd: rate.required(),
  cache_read_per_million_usd: rate.description(CACHE_READ),
  cache_write_per_million_usd: rate.description(CACHE_WRITE),
})
  .allow(null)
  .description('USD per million tokens; cached input tokens are charged at the cache rates');

const MAX_OUTPUT =
  'The most tokens one answer of this model may hold. A call that sets no output limit is reserved at this ' +
  'against budgets and tokens_per_minute; null: the shipped table of known models (docs/api.md#budgets)';
const maxOutputTokens = Joi.number().integer().min(1).max(10_000_000).allow(null).description(MAX_OUTPUT);

const PROVIDER_CHOICE =
  'The provider that serves the model, of `provider_type`. Optional while at most one provider of that type ' +
  'exists (the only one serves it at call time); while several do it is required: a model without it is ' +
  'refused (400 naming provider_id and the candidates), on create and on update';
const providerId = uuid.allow(null).description(PROVIDER_CHOICE);

const modelId = Joi.string().trim().min(1).max(200);
const providerType = Joi.string().valid(...PROVIDER_TYPES);

export const modelCreate = {
  query: Joi.object(projectQuery),
  body: Joi.object({
    name: name.required(),
    model_id: modelId.required(),
    provider_type: providerType.required(),
    provider_id: providerId,
    parameters,
    pricing,
    max_output_tokens: maxOutputTokens,
  }).required(),
};
export const modelList = { query: Joi.object({ ...projectQuery, ...pagination }) };
export const modelGet = { params: idParams, query: Joi.object(optionalProjectQuery) };
export const modelUpdate = {
  params: idParams,
  query: Joi.object(optionalProjectQuery),
  body: Joi.object({
    name,
    model_id: modelId,
    provider_type: providerType,
    provider_id: providerId,
    parameters,
    pricing,
    max_output_tokens: maxOutputTokens,
  })
    .min(1)
    .required(),
};
export const modelDelete = { params: idParams, query: Joi.object(optionalProjectQuery) };

export interface ModelCreateBody {
  name: string;
  model_id: string;
  provider_type: ProviderType;
  provider_id?: string | null;
  parameters?: Record<string, unknown>;
  pricing?: Price | null;
  max_output_tokens?: number | null;
}
export type ModelUpdateBody = Partial<ModelCreateBody>;

/** What the API returns for a model (docs/interface.md#models). */
export interface Model {
  id: string;
  project_id: string;
  name: string;
  model_id: string;
  provider_type: ProviderType;
  provider_id: string | null;
  parameters: Record<string, unknown>;
  pricing: Price | null;
  max_output_tokens: number | null;
  created_at: string;
  updated_at: string;
}

export const modelResponse = Joi.object({
  id: uuid,
  project_id: uuid,
  name: Joi.string(),
  model_id: Joi.string().description('the provider-side model identifier'),
  provider_type: providerType,
  provider_id: uuid
    .allow(null)
    .description(
      'null: served by the only provider of `provider_type` at call time (refused on save while several exist)',
    ),
  parameters: Joi.object().unknown(true),
  pricing: Joi.object({
    input_per_million_usd: Joi.number(),
    output_per_million_usd: Joi.number(),
    cache_read_per_million_usd: Joi.number().description(CACHE_READ),
    cache_write_per_million_usd: Joi.number().description(CACHE_WRITE),
  }).allow(null),
  max_output_tokens: Joi.number().integer().allow(null).description(MAX_OUTPUT),
  created_at: timestamp,
  updated_at: timestamp,
});
export const modelListResponse = Joi.array().items(modelResponse);
