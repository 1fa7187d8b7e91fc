import Joi from 'joi';
import type { AppDeps } from '../deps.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import { idParams } from '../schemas/common.schemas.js';
import { GatewayPolicyService } from '../services/gateway-policy.service.js';

const DEFAULT_WINDOW_MS = 30 * 24 * 3600 * 1000;

const usageRow = {
  requests: Joi.number().integer(),
  errors: Joi.number().integer(),
  input_tokens: Joi.number().integer(),
  output_tokens: Joi.number().integer(),
  cost_usd: Joi.number(),
  avg_latency_ms: Joi.number(),
};

export function virtualKeyUsageRoutes(deps: AppDeps): ApiRouter {
  const policy = new GatewayPolicyService(deps.db, deps.usage);
  return new ApiRouter('/api/agent-server/virtual-keys', 'VirtualKeys').route<
    Validated<{ id: string }, { start_time?: Date; end_time?: Date }>
  >(
    {
      method: 'get',
      path: '/:id/usage',
      summary: "A virtual key's gateway usage: totals and per-model rows",
      description:
        'Window `start_time` (inclusive) to `end_time` (exclusive), ISO 8601; default the last 30 days.',
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
      if (!(await deps.db('virtual_keys').where({ id: params.id }).first('id')))
        throw new NotFoundError('virtual key');
      const end = query.end_time ?? new Date();
      const start = query.start_time ?? new Date(end.getTime() - DEFAULT_WINDOW_MS);
      if (start >= end)
        throw ValidationError.field('start_time', 'start_time must be before end_time', 'date.min');
      ok(ctx, await policy.usage(params.id, start, end));
    },
  );
}
