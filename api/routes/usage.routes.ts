import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import * as s from '../schemas/usage.schemas.js';
import { UsageService } from '../services/usage.service.js';

/** Gateway usage over time, across virtual keys (the console's usage charts). */
export function usageRoutes(deps: AppDeps): ApiRouter {
  const usage = new UsageService(deps.db, () => deps.usage.flush());
  return new ApiRouter('/api/agent-server/usage', 'Usage')
    .access({ read: 'project:read', write: 'project:read' })
    .route<Validated<never, s.UsageSeriesQuery>>(
      {
        method: 'get',
        path: '/',
        summary: 'Gateway usage as a time series, by the hour or the day',
        description:
          "Every model call (gateway calls under their virtual key; agent turns under their project's key, or " +
          'under no key, a null `virtual_key_id`, when the project has none) summed per UTC ' +
          '`bucket`: requests, errors, tokens and cost, zeros for buckets without calls. Filter by ' +
          '`virtual_key_id`, `model` and `provider` (name); `group_by` gives one series per key, per provider and ' +
          'model, or per provider. Default window: 24 hourly or 30 daily buckets up to now; at most 744 ' +
          'buckets (400 naming `start_time`). Virtual keys are global, so usage is not per project: a ' +
          "project's agents are metered under its `virtual_key_id`, or under no key.",
        request: s.usageSeries,
        response: s.usageSeriesResponse,
      },
      async (ctx, { query }) => ok(ctx, await usage.timeSeries(query)),
    );
}
