import Joi from 'joi';
import type { AppDeps } from '../deps.js';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import { VirtualKeysRepository } from '../../core/repositories/virtual-keys.repository.js';
import { idParams } from '../schemas/common.schemas.js';
import * as u from '../schemas/usage.schemas.js';
import { UsageService } from '../services/usage.service.js';

const DEFAULT_WINDOW_MS = 30 * 24 * 3600 * 1000;

const usageRow = {
  requests: Joi.number().integer(),
  errors: Joi.number().integer(),
  input_tokens: Joi.number().integer().description('Every prompt token, cache reads and writes included'),
  output_tokens: Joi.number().integer(),
  cache_read_tokens: Joi.number().integer().description('Of input_tokens, read from the prompt cache'),
  cache_write_tokens: Joi.number().integer().description('Of input_tokens, written to the prompt cache'),
  cost_usd: Joi.number().description('Cache reads and writes charged at the Model pricing’s cache rates'),
  avg_latency_ms: Joi.number(),
};

export function virtualKeyUsageRoutes(deps: AppDeps): ApiRouter {
  const keys = new VirtualKeysRepository(deps.db);
  const series = new UsageService(deps.db, () => deps.usage.flush());
  return new ApiRouter('/api/agent-server/virtual-keys', 'VirtualKeys')
    .access({ read: 'org:admin', write: 'org:admin' })
    .route<Validated<{ id: string }, { start_time?: Date; end_time?: Date }>>(
      {
        method: 'get',
        path: '/:id/usage',
        summary: "A virtual key's gateway usage: totals and per-model rows",
        description:
          'Window `start_time` (inclusive) to `end_time` (exclusive), ISO 8601; default the last 30 days. ' +
          'A deleted key answers too: its usage is kept.',
        request: {
          params: idParams,
          query: Joi.object({ start_time: Joi.date().iso(), end_time: Joi.date().iso() }),
        },
        response: Joi.object({
          start_time: Joi.string().isoDate(),
          end_time: Joi.string().isoDate(),
          totals: Joi.object(usageRow),
          models: Joi.array().items(Joi.object({ provider: Joi.string(), model: Joi.string(), ...usageRow })),
        }),
      },
      async (ctx, { params, query }) => {
        // A deleted key's usage stays readable: its spending history is kept.
        if (!(await keys.existsIncludingDeleted(params.id))) throw new NotFoundError('virtual key');
        const end = query.end_time ?? new Date();
        const start = query.start_time ?? new Date(end.getTime() - DEFAULT_WINDOW_MS);
        if (start >= end)
          throw ValidationError.field('start_time', 'start_time must be before end_time', 'date.min');
        ok(ctx, await series.keyUsage(params.id, start, end));
      },
    )
    .route<Validated<{ id: string }, Omit<u.UsageSeriesQuery, 'virtual_key_id'>>>(
      {
        method: 'get',
        path: '/:id/usage/series',
        summary: "A virtual key's gateway usage as a time series, with its budget",
        description:
          'As GET /usage with `virtual_key_id` (buckets, window, filters, `group_by` model or provider), plus the ' +
          "key's `budget`: `max_usd` per `period`, the current period's start and end, and what it has spent " +
          'and holds reserved, as the gateway counts it (for a burn-down). A deleted key answers too.',
        request: u.keyUsageSeries,
        response: u.keyUsageSeriesResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await series.keySeries(params.id, query)),
    );
}
