import type { Context } from 'koa';
import type { ProviderFormat } from '../../core/llm/types.js';
import { InvalidLlmRequestError, UnsupportedFeatureError, UpstreamError } from '../../core/llm/errors.js';
import { AppError } from '../../core/errors.js';
import { GatewayError, type GatewayErrorKind } from './errors.js';
import { surfaceOfPath } from './surfaces/index.js';
import { toGatewayError } from './upstream.js';

export const GATEWAY_PREFIX = '/api/gateway/';

/**
 * Whether a path is the gateway's, whatever its case: `/API/gateway/…` matches
 * no route (routing is case-sensitive) but its 404 still comes in the
 * vendor's shape, which is what an SDK pointed at it can parse.
 */
export const isGatewayPath = (path: string): boolean =>
  path.length >= GATEWAY_PREFIX.length &&
  path.slice(0, GATEWAY_PREFIX.length).toLowerCase() === GATEWAY_PREFIX;

const KIND_BY_STATUS: Record<number, GatewayErrorKind> = {
  400: 'invalid_request',
  401: 'authentication',
  403: 'permission',
  404: 'not_found',
  405: 'not_found',
  413: 'request_too_large',
  415: 'invalid_request',
  429: 'rate_limit',
};

interface HttpLike {
  status?: number;
  statusCode?: number;
  type?: string;
  message?: string;
}

/** Framework errors (router 404/405, body parser 400/413/415) keep their status, in gateway terms. */
function fromFramework(err: HttpLike): GatewayError | undefined {
  const status = err instanceof AppError ? err.status : (err.status ?? err.statusCode);
  // The router's 501 (a method no route has, e.g. PROPFIND) reads as the vendors' 405.
  if (status === 501)
    return new GatewayError(405, 'not_found', 'method not allowed on this gateway endpoint');
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  if (status === 413)
    return new GatewayError(413, 'request_too_large', 'request body exceeds the size limit');
  if (status === 400 && err.type === 'entity.parse.failed')
    return new GatewayError(400, 'invalid_request', 'request body is not valid JSON');
  if (status === 404) return new GatewayError(404, 'not_found', 'no such gateway endpoint');
  if (status === 405)
    return new GatewayError(405, 'not_found', 'method not allowed on this gateway endpoint');
  return new GatewayError(
    status,
    KIND_BY_STATUS[status] ?? 'invalid_request',
    err.message ?? 'invalid request',
  );
}

/** Google's ErrorInfo `domain`: whose reasons these are. */
const ERROR_INFO_DOMAIN = 'agent-server.gateway';

/**
 * A GatewayError's own `code` in its shape's slot for one, keeping the
 * vendor's fields as they are (so an SDK still picks the error class by
 * status, and Google's `status` stays a canonical code): OpenAI's `code`;
 * Anthropic's `error.details.error_code` (the SDK's `errorCode`); Google's
 * `google.rpc.ErrorInfo` in `details`, its `reason` upper case as Google
 * writes them.
 */
export function withErrorCode(format: ProviderFormat, body: unknown, code: string): unknown {
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error;
  if (!error || typeof error !== 'object') return body;
  if (format === 'openai') error.code = code;
  else if (format === 'anthropic') error.details = { error_code: code };
  else
    error.details = [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: code.toUpperCase(),
        domain: ERROR_INFO_DOMAIN,
      },
    ];
  return body;
}

/**
 * Renders any error of a gateway request in the caller's surface's own error
 * shape (never the configuration API's envelope). 5xx never show internals
 * beyond the upstream's own message.
 */
export function gatewayErrorResponse(ctx: Context, caught: unknown): void {
  const ours =
    caught instanceof GatewayError ||
    caught instanceof UpstreamError ||
    caught instanceof UnsupportedFeatureError ||
    caught instanceof InvalidLlmRequestError;
  const err = ours ? toGatewayError(caught) : (fromFramework(caught as HttpLike) ?? toGatewayError(caught));
  const surface = surfaceOfPath(ctx.path);
  ctx.status = err.status;
  ctx.body = err.code
    ? withErrorCode(surface.format, surface.errorBody(err), err.code)
    : surface.errorBody(err);
  if (err.retryAfterMs !== undefined) ctx.set('Retry-After', String(Math.ceil(err.retryAfterMs / 1000)));
  if (err.kind === 'internal')
    ctx.state.log.error({ err: caught, request_id: ctx.state.requestId }, 'gateway request failed');
  ctx.state.error = caught;
}
