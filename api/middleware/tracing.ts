import { randomUUID } from 'node:crypto';
import {
  context,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Context, Next } from 'koa';
import { redactQuery } from '../../core/security/redact.js';
import { ATTR, CONSOLE_CLIENT } from '../../core/telemetry/attributes.js';
import type { Telemetry } from '../../core/telemetry/telemetry.js';
import { withInheritedAttributes } from '../../core/telemetry/turn-context.js';

// Used directly rather than through the global API, so an incoming traceparent
// still gives X-Trace-Id when tracing is disabled.
const propagator = new W3CTraceContextPropagator();

/** The HTTP semantic conventions' known methods; anything else is `_OTHER`, keeping span names bounded. */
const KNOWN_METHODS = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'TRACE',
  'CONNECT',
]);

/** The method as a bounded label: a known method, else `_OTHER` (span names and metrics). */
export function httpMethodLabel(method: string): string {
  return KNOWN_METHODS.has(method) ? method : '_OTHER';
}

const templates = new Map<string, string>();

/** `/agents/:id` → `/agents/{id}`: the OpenAPI form of the route template (cached: routes are few). */
export function routeTemplate(koaPath: string): string {
  let t = templates.get(koaPath);
  if (t === undefined) {
    t = koaPath.replace(/:([A-Za-z0-9_]+)(\([^)]*\))?[?*+]?/g, '{$1}');
    if (templates.size < 10_000) templates.set(koaPath, t);
  }
  return t;
}

/**
 * The name of a request no route matched (a 404, a 405 of no route): the HTTP
 * conventions' `{method} {target}` needs a low-cardinality target, and the
 * path is not one; the method alone (`GET`) reads as a span that lost its
 * name, so the target says what happened instead. No `http.route` is set.
 */
export const UNROUTED = '(unrouted)';

/** The routes of the console's static files (api/http/console.ts). */
const CONSOLE_ROUTES: ReadonlySet<string> = new Set(['/console/*', '/']);

/** The `x-agent-server-client` header as an attribute value: bounded, as every span of the request carries it. */
function clientOf(ctx: Context): string | undefined {
  const client = ctx.get('x-agent-server-client');
  return client ? client.slice(0, 64) : undefined;
}

/**
 * One SERVER span per request, named `METHOD /route/template` once the router
 * (or the console's static files, `/console/*`) has matched; a request nothing
 * matched is `METHOD (unrouted)`. Outermost middleware: it sees the final
 * status, which the error handler has already set, and X-Trace-Id is on every
 * response. The caller's `x-agent-server-client` header (the console sends
 * `console`) is recorded on the span and every span inside the request, so
 * the trace list and statistics can leave the console's own calls out.
 */
export function tracing(telemetry: Telemetry | undefined) {
  const tracer = telemetry?.tracer('api', 'agent-server-http');
  return async function tracingMiddleware(ctx: Context, next: Next): Promise<void> {
    const parent = propagator.extract(ROOT_CONTEXT, ctx.headers, defaultTextMapGetter);
    const method = httpMethodLabel(ctx.method);
    if (!tracer) {
      const incoming = trace.getSpanContext(parent)?.traceId;
      // A random id in the W3C form (a v4 UUID without its dashes: 122 random bits). randomUUID
      // draws on Node's cached entropy; randomBytes(16) asked OpenSSL on every request, 6.6 µs
      // against 0.7 µs here (8% of an untraced GET /agents/{id}'s main thread in a V8 profile).
      ctx.set('X-Trace-Id', incoming ?? randomUUID().replaceAll('-', ''));
      await next();
      return;
    }
    const attributes: Attributes = {
      'http.request.method': method,
      'url.path': ctx.path,
      'url.scheme': ctx.protocol,
      'network.protocol.version': ctx.req.httpVersion,
    };
    // Gemini's SDKs may send the virtual key as `?key=`: never record a credential's value.
    if (ctx.querystring) attributes['url.query'] = redactQuery(ctx.querystring);
    const ua = ctx.get('user-agent');
    if (ua) attributes['user_agent.original'] = ua;
    if (ctx.socket.remoteAddress) attributes['client.address'] = ctx.socket.remoteAddress;
    if (ctx.socket.localPort) attributes['server.port'] = ctx.socket.localPort;
    // Attributes set after the start, not passed to it: the SDK validates (and copies) start
    // attributes twice, once for the sampler and once for the span; ours samples by parent only.
    const client = clientOf(ctx);
    const inside = client ? withInheritedAttributes(parent, { [ATTR.client]: client }) : parent;
    if (client) attributes[ATTR.client] = client;
    const span = tracer
      .startSpan(`${method} ${UNROUTED}`, { kind: SpanKind.SERVER }, parent)
      .setAttributes(attributes);
    ctx.set('X-Trace-Id', span.spanContext().traceId);
    try {
      await context.with(trace.setSpan(inside, span), next);
    } catch (err) {
      // Only reachable if something above the error handler throws; Koa answers 500.
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      if (typeof route === 'string') {
        const template = routeTemplate(route);
        span.setAttribute('http.route', template);
        span.updateName(`${method} ${template}`);
        // Loading the console's pages and files is the console's own traffic too (a browser sends no header for it).
        if (!client && CONSOLE_ROUTES.has(template)) span.setAttribute(ATTR.client, CONSOLE_CLIENT);
      }
      const status = ctx.status;
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) {
        span.setAttribute('error.type', String(status));
        const cause = (ctx.state as { error?: unknown }).error;
        if (cause instanceof Error) span.recordException(cause);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    }
  };
}
