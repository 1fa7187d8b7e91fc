import type { Context, Next } from 'koa';
import type { Config } from '../../core/config.js';
import { metrics, metricsRegistry } from '../../core/telemetry/metrics.js';
import { answerScrape } from '../../core/telemetry/metrics/server.js';
import { httpMethodLabel, routeTemplate } from './tracing.js';

/**
 * The outermost middleware of the app (one layer, for the hot path):
 *
 * - `GET /metrics` in the Prometheus text format, behind METRICS_TOKEN (or
 *   ADMIN_TOKEN) when either is set, open otherwise. Answered here, before
 *   tracing: a scrape is not traced, logged or counted (every replica is
 *   scraped every few seconds; it would be noise in all three).
 * - every other request: `http.server.request.duration` by method, route
 *   template and status, seen from outside the tracing middleware, so with
 *   the final status and everything the server did for it.
 */
export function httpMetrics(config: Config) {
  const scrape = { token: config.metrics.token };
  return async function httpMetricsMiddleware(ctx: Context, next: Next): Promise<void> {
    if (ctx.path === '/metrics' && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      const registry = metricsRegistry();
      if (registry) {
        const answer = await answerScrape(registry, ctx.get('authorization') || undefined, scrape);
        ctx.status = answer.status;
        ctx.body = answer.body;
        ctx.set('Content-Type', answer.type);
        if (answer.status === 401) ctx.set('WWW-Authenticate', 'Bearer');
        return;
      }
    }
    const started = performance.now();
    let thrown = false;
    try {
      await next();
    } catch (err) {
      thrown = true; // past the error handler: Koa answers 500
      throw err;
    } finally {
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      metrics().http.record(
        httpMethodLabel(ctx.method),
        typeof route === 'string' ? routeTemplate(route) : undefined,
        thrown ? 500 : ctx.status,
        (performance.now() - started) / 1000,
      );
    }
  };
}
