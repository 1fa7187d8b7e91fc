import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import { TracesRepository } from '../../core/repositories/traces.repository.js';
import { currentTelemetry } from '../../core/telemetry/telemetry.js';
import * as s from '../schemas/traces.schemas.js';
import { TracesService } from '../services/traces.service.js';

export function traceRoutes(deps: AppDeps): ApiRouter {
  // This process's latest counts go to the rollups before a statistics read (other replicas' within one flush interval).
  const traces = new TracesService(
    new TracesRepository(deps.db),
    async () => await currentTelemetry()?.flushRollups(),
  );
  // The stats routes come first: `/stats/...` must not be taken for a trace id.
  return new ApiRouter('/api/agent-server/traces', 'Traces')
    .access({ read: 'project:read', write: 'project:read' })
    .route<Validated<never, s.EndpointStatsQuery>>(
      {
        method: 'get',
        path: '/stats/endpoints',
        summary: 'Latency and errors per service and span name, by call count',
        description:
          'HTTP server spans are named `METHOD /route/template`; an error is a span with error status (5xx for HTTP). ' +
          'Counted from per-minute rollups of every span, stored or not: counts, errors, average and max are exact; ' +
          'percentiles come from a merged histogram, within 2.2 % of percentile_cont. ' +
          'Window: start_time/end_time, default the last 24 h, taken in whole minutes (every minute it touches).',
        request: s.endpointStats,
        response: s.endpointStatsResponse,
      },
      async (ctx, { query }) => ok(ctx, await traces.endpoints(query)),
    )
    .route<Validated<never, s.ServiceStatsQuery>>(
      {
        method: 'get',
        path: '/stats/services',
        summary: "Latency and errors per service, over each service's entry spans",
        request: s.serviceStats,
        response: s.serviceStatsResponse,
      },
      async (ctx, { query }) => ok(ctx, await traces.services(query)),
    )
    .route<Validated<never, s.ModelStatsQuery>>(
      {
        method: 'get',
        path: '/stats/models',
        summary: 'Model calls per provider and model: calls, errors, tokens, cost, latency',
        request: s.modelStats,
        response: s.modelStatsResponse,
      },
      async (ctx, { query }) => ok(ctx, await traces.models(query)),
    )
    .route<Validated<never, s.TraceListQuery>>(
      {
        method: 'get',
        path: '/',
        summary: 'List traces, newest first (default: the last 24 h)',
        request: s.traceList,
        response: s.traceListResponse,
      },
      async (ctx, { query }) => ok(ctx, await traces.list(query)),
    )
    .route<Validated<{ trace_id: string }>>(
      {
        method: 'get',
        path: '/:trace_id',
        summary: 'Every span of a trace, and the span tree',
        request: s.traceGet,
        response: s.traceResponse,
      },
      async (ctx, { params }) => ok(ctx, await traces.get(params.trace_id)),
    );
}
