import type { Context, Next } from 'koa';
import { AppError, STATUS_MESSAGES } from '../../core/errors.js';
import { hostAllowed, originAllowed, type AllowedHosts } from '../../core/security/allowed-hosts.js';
import { corsOriginAllowed, NO_CORS, type CorsOrigins } from '../../core/security/cors-origins.js';

/**
 * Kubelet and load-balancer probes address the pod's IP: health answers
 * whatever the Host. The OAuth callback and client metadata document are
 * reached at PUBLIC_URL, which a proxy may forward under another Host; the
 * callback's credential is its single-use state, and both only read.
 */
const EXEMPT = /^\/api\/agent-server\/health(\/ready)?\/?$|^\/oauth\/(callback|client-metadata\.json)$/;
/** The configuration API, where a browser's cross-site request could change something. */
const CONFIGURATION = '/api/agent-server/';
/** The Agent Protocol door: it changes threads, runs, assistants and the store. */
const AGENT_PROTOCOL = '/api/langgraph/';
/** The A2A door: its JSON-RPC methods start and cancel agents' tasks. */
const A2A = '/api/a2a/';
/** The MCP door: its calls run agents' turns. */
const MCP = '/api/mcp/';
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Right after the error handler, before the body is read: a request whose
 * `Host` is not on the allow-list (core/security/allowed-hosts.ts) is a 421
 * (in the envelope, or in the vendor's shape on the gateway); a state-changing
 * request to the configuration API from a browser page of another origin
 * (`Origin` present and not allowed, or `null`) is a 403. No `Origin` is
 * fine: curl and the SDKs send none. The A2A and MCP doors are guarded so
 * too (for MCP, the DNS-rebinding defence its spec asks of HTTP servers). The
 * Agent Protocol door is guarded the same way, except for the origins of
 * AGENT_PROTOCOL_CORS_ORIGINS (front ends such as Agent Chat UI;
 * api/protocols/langgraph/cors.ts answers them). The
 * gateway never checks `Origin`: browser apps call it cross-origin with
 * virtual keys.
 */
export function hostCheck(list: AllowedHosts, agentProtocolOrigins: CorsOrigins = NO_CORS) {
  return async function hostCheckMiddleware(ctx: Context, next: Next): Promise<void> {
    if (list.any || EXEMPT.test(ctx.path)) {
      await next();
      return;
    }
    const host = ctx.get('host') || undefined;
    if (!hostAllowed(list, host))
      throw new AppError(421, STATUS_MESSAGES[421]!, {
        reason: 'this server does not answer for the host in the Host header (see ALLOWED_HOSTS)',
      });
    const origin = ctx.get('origin');
    const path = ctx.path.toLowerCase();
    const door = path.startsWith(AGENT_PROTOCOL);
    if (
      origin !== '' &&
      STATE_CHANGING.has(ctx.method) &&
      (door || path.startsWith(CONFIGURATION) || path.startsWith(MCP) || path.startsWith(A2A)) &&
      !originAllowed(list, origin, host) &&
      !(door && corsOriginAllowed(agentProtocolOrigins, origin))
    )
      throw new AppError(403, STATUS_MESSAGES[403]!, {
        reason: door
          ? 'cross-origin request refused: the Origin is not one of AGENT_PROTOCOL_CORS_ORIGINS'
          : 'cross-origin request refused: the Origin header names a host that is not allowed',
      });
    await next();
  };
}
