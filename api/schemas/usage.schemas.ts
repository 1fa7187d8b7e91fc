import Joi from 'joi';
import { idParams, timestamp, uuid } from './common.schemas.js';
import type { UsageBucket, UsageGroupBy } from '../../core/repositories/usage-series.repository.js';

export const USAGE_BUCKETS = ['hour', 'day'] as const;

const seriesQuery = {
  bucket: Joi.string()
    .valid(...USAGE_BUCKETS)
    .default('hour')
    .description('UTC hours or UTC days'),
  start_time: Joi.date()
    .iso()
    .description(
      'Inclusive, rounded down to its bucket; default: 24 hourly or 30 daily buckets up to end_time',
    ),
  end_time: Joi.date().iso().description('Exclusive; default now (the current bucket is partial)'),
  model: Joi.string().min(1).max(200).description('Only calls of this model id, as the usage rows record it'),
  provider: Joi.string().min(1).max(200).description('Only calls through the provider of this name'),
};

export const usageSeries = {
  query: Joi.object({
    ...seriesQuery,
    virtual_key_id: uuid.description(
      'Only calls made with this virtual key (calls without a key are left out)',
    ),
    group_by: Joi.string()
      .valid('key', 'model', 'provider')
      .description('One series per virtual key, per provider and model, or per provider'),
  }),
};

export const keyUsageSeries = {
  params: idParams,
  query: Joi.object({
    ...seriesQuery,
    group_by: Joi.string()
      .valid('model', 'provider')
      .description('One series per provider and model, or per provider'),
  }),
};

export interface UsageSeriesQuery {
  bucket: UsageBucket;
  start_time?: Date;
  end_time?: Date;
  model?: string;
  provider?: string;
  virtual_key_id?: string;
  group_by?: UsageGroupBy;
}

const sums = {
  requests: Joi.number().integer(),
  errors: Joi.number().integer().description('Calls answered with a status of 400 or more'),
  input_tokens: Joi.number().integer().description('Every prompt token, cache reads and writes included'),
  output_tokens: Joi.number().integer(),
  cache_read_tokens: Joi.number().integer().description('Of input_tokens, read from the prompt cache'),
  cache_write_tokens: Joi.number().integer().description('Of input_tokens, written to the prompt cache'),
  cost_usd: Joi.number().description('Cache reads and writes charged at the Model pricing’s cache rates'),
};

export const usageSeriesResponse = Joi.object({
  bucket: Joi.string().valid(...USAGE_BUCKETS),
  start_time: timestamp.description("The first bucket's start"),
  end_time: timestamp,
  group_by: Joi.string().valid('key', 'model', 'provider').allow(null),
  buckets: Joi.array()
    .items(
      Joi.object({
        bucket_start: timestamp,
        virtual_key_id: uuid
          .allow(null)
          .description(
            'With group_by=key; null for the calls no key metered (agent turns of projects without a virtual key)',
          ),
        virtual_key_name: Joi.string().allow(null).description('With group_by=key; null without a key'),
        provider: Joi.string().description('With group_by=model or provider'),
        model: Joi.string().description('With group_by=model'),
        ...sums,
      }),
    )
    .description(
      'Oldest first: every bucket of the window (per group), zeros where nothing was called. Grouped, only ' +
        'groups with calls in the window appear, the 20 with most requests.',
    ),
  totals: Joi.object(sums).description('Over the whole window and every group'),
  groups_omitted: Joi.number().integer().description('Groups with calls left out of `buckets` (beyond 20)'),
});

export const keyUsageSeriesResponse = usageSeriesResponse.keys({
  virtual_key: Joi.object({ id: uuid, name: Joi.string(), deleted: Joi.boolean() }),
  budget: Joi.object({
    max_usd: Joi.number(),
    period: Joi.string().valid('day', 'week', 'month', 'total'),
    period_start: timestamp,
    period_end: timestamp.allow(null).description('null for `total`'),
    spent_usd: Joi.number().description('Spent in the current period, as the budget counts it'),
    reserved_usd: Joi.number().description('Held by calls in flight'),
    remaining_usd: Joi.number(),
  })
    .allow(null)
    .description("The key's budget and where the current period stands; null when the key has none"),
});
