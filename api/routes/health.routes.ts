import Joi from 'joi';
import type { AppDeps } from '../deps.js';
import { ServiceUnavailableError } from '../../core/errors.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import { currentTelemetry } from '../../core/telemetry/telemetry.js';

interface CheckResult {
  ok: boolean;
  latency_ms: number;
  error?: string;
}

async function timed(fn: () => Promise<unknown>, timeoutMs: number): Promise<CheckResult> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, latency_ms: Math.round(performance.now() - started) };
  } catch (err) {
    // The reason is an operator's aid (connection refused, timeout); it carries no secrets.
    const e = err as { code?: string; message?: string };
    return {
      ok: false,
      latency_ms: Math.round(performance.now() - started),
      error: e.code ?? e.message ?? 'unavailable',
    };
  } finally {
    clearTimeout(timer);
  }
}

const check = Joi.object({ ok: Joi.boolean(), latency_ms: Joi.number(), error: Joi.string() });

export function healthRoutes(deps: AppDeps): ApiRouter {
  return new ApiRouter('/api/agent-server/health', 'Health')
    .access({ read: 'public', write: 'public' })
    .route(
      {
        method: 'get',
        public: true,
        path: '/',
        summary: 'Liveness: the process answers',
        response: Joi.object({ status: Joi.string().valid('ok') }),
      },
      (ctx) => ok(ctx, { status: 'ok' }),
    )
    .route(
      {
        method: 'get',
        public: true,
        path: '/ready',
        summary: 'Readiness: PostgreSQL and Temporal answer; 503 naming what is down',
        response: Joi.object({
          status: Joi.string().valid('ready'),
          checks: Joi.object().pattern(Joi.string(), check),
          // Tracing is best effort: a full span queue is reported here, never a reason to be unready.
          telemetry: Joi.object({
            enabled: Joi.boolean().description('spans are stored; false with OTEL_SDK_DISABLED'),
            sampler: Joi.string().description('OTEL_TRACES_SAMPLER, with its ratio'),
            sampling: Joi.object({
              sampler: Joi.string(),
              ratio: Joi.number().allow(null),
              always_stored: Joi.array().items(Joi.string()),
              keep_slow_ms: Joi.number().integer(),
              held_traces: Joi.number().integer(),
              held_spans: Joi.number().integer(),
              kept_for_error: Joi.number().integer(),
              kept_for_slowness: Joi.number().integer(),
              dropped_traces: Joi.number().integer(),
              lost_spans: Joi.number().integer(),
            }).description(
              'the sampling in force: what is stored whatever the sampler says; traces kept and dropped',
            ),
            dropped_spans: Joi.number().integer(),
            exporters: Joi.object().pattern(Joi.string(), Joi.object()),
            rollups: Joi.object({
              interval_ms: Joi.number().integer(),
              pending_keys: Joi.number().integer(),
              flushed_rows: Joi.number().integer(),
              failed_flushes: Joi.number().integer(),
              dropped_spans: Joi.number().integer(),
              last_flush_at: Joi.string().allow(null),
            }).description('the counting behind the trace statistics (absent with METRICS_ENABLED=false)'),
          }),
        }),
      },
      async (ctx) => {
        const [postgres, temporal] = await Promise.all([
          timed(() => deps.db.raw('select 1'), 2_000),
          timed(() => deps.temporal.check(2_000), 2_500),
        ]);
        const checks = { postgres, temporal };
        const down = Object.entries(checks)
          .filter(([, c]) => !c.ok)
          .map(([name]) => name);
        if (down.length > 0) throw new ServiceUnavailableError({ down, checks });
        ok(ctx, { status: 'ready', checks, telemetry: currentTelemetry()?.stats() ?? { enabled: false } });
      },
    );
}
