import type { Context, Next } from 'koa';
import type { Config } from '../../core/config.js';
import { metrics, metricsRegistry } from '../../core/telemetry/metrics.js';
import { answerScrape } from '../../core/telemetry/metrics/server.js';
import { httpMethodLabel, routeTemplate } from './tracing.js';

/**
 * The outermost middleware of the app (one layer, for the hot path):
 *
 * - `GET /metrics` in the Prometheus text format, behind METRICS_TOKEN (or
 *   ADMIN_TOKEN) when either is set, open otherwise; in users mode without
 *   METRICS_TOKEN, behind an organisation admin's credential. Answered here, before
 *   tracing: a scrape is not traced, logged or counted (every replica is
 *   scraped every few seconds; it would be noise in all three).
 * - every other request: `http.server.request.duration` by method, route
 *   template and status, seen from outside the tracing middleware, so with
 *   the final status and everything the server did for it.
 */
export function httpMetrics(config: Config, userMayScrape?: (ctx: Context) => Promise<boolean>) {
  const scrape = { token: userMayScrape ? config.metrics.ownToken : config.metrics.token };
  return async function httpMetricsMiddleware(ctx: Context, next: Next): Promise<void> {
    if (ctx.path === '/metrics' && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      const registry = metricsRegistry();
      if (registry) {
        const authorization = ctx.get('authorization') || undefined;
        // Users mode without METRICS_TOKEN: an organisation admin's credential, never open.
        const byUser = userMayScrape && !scrape.token;
        const answer = byUser
          ? (await userMayScrape(ctx))
            ? await answerScrape(registry, undefined, { token: undefined })
            : { status: 401, type: 'text/plain; charset=utf-8', body: 'Unauthorized\n' }
          : await answerScrape(registry, authorization, scrape);
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
