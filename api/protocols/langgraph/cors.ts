import type { Context, Next } from 'koa';
import { corsOriginAllowed, type CorsOrigins } from '../../../core/security/cors-origins.js';
import { isLangGraphPath } from './errors.js';

/** What the LangGraph SDK (and Agent Chat UI) send: JSON bodies, the key, a stream to resume. */
const ALLOW_HEADERS = [
  'content-type',
  'x-api-key',
  'authorization',
  'last-event-id',
  'x-auth-scheme',
  'x-tenant-id',
  'x-request-id',
];
const ALLOW_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
/** Read by the SDK: a run's address (Content-Location), pagination, a run's webhook secret. */
const EXPOSE_HEADERS = 'Content-Location, Location, X-Pagination-Next, X-Pagination-Total, Webhook-Secret';
/** How long a browser may reuse a preflight's answer (seconds). */
const MAX_AGE = '600';

/**
 * CORS for the Agent Protocol door only (AGENT_PROTOCOL_CORS_ORIGINS), so a
 * front end on another origin (Agent Chat UI, a `useStream` page) can use it.
 * After the Host check (api/middleware/host-check.ts, which lets these
 * origins change state on this path): a preflight from an allowed origin is
 * answered here (204) whatever route it names; other requests from it get
 * `Access-Control-Allow-Origin` before the routers run, so the door's errors
 * carry it too. Origins not allowed get no CORS header at all (the browser
 * refuses the call); the rest of the API never gets any.
 */
export function agentProtocolCors(cors: CorsOrigins) {
  const enabled = cors.any || cors.origins.length > 0;
  return async function agentProtocolCorsMiddleware(ctx: Context, next: Next): Promise<void> {
    const origin = ctx.get('origin');
    if (!enabled || origin === '' || !isLangGraphPath(ctx.path) || !corsOriginAllowed(cors, origin)) {
      await next();
      return;
    }
    ctx.vary('Origin');
    ctx.set('Access-Control-Allow-Origin', origin);
    const preflight = ctx.method === 'OPTIONS' && ctx.get('access-control-request-method') !== '';
    if (!preflight) {
      ctx.set('Access-Control-Expose-Headers', EXPOSE_HEADERS);
      await next();
      return;
    }
    ctx.set('Access-Control-Allow-Methods', ALLOW_METHODS);
    ctx.set('Access-Control-Allow-Headers', allowHeaders(ctx.get('access-control-request-headers')));
    ctx.set('Access-Control-Max-Age', MAX_AGE);
    ctx.status = 204;
  };
}

/** The SDK's headers, plus whatever else a client asks for: the door's auth is the key, not CORS. */
function allowHeaders(requested: string): string {
  const asked = requested
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => /^[a-z0-9-]+$/.test(h));
  return [...new Set([...ALLOW_HEADERS, ...asked])].join(', ');
}
