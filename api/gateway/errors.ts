/** Errors of the gateway; each surface renders them in its vendor's own error shape. */

export type GatewayErrorKind =
  | 'invalid_request'
  | 'authentication'
  | 'permission'
  | 'not_found'
  | 'request_too_large'
  | 'rate_limit'
  | 'insufficient_quota'
  | 'upstream'
  | 'timeout'
  | 'internal';

/**
 * Thrown by the gateway for anything the caller should see: a bad request
 * (400), a missing/unknown/expired key (401), an ungranted provider or model
 * (403), an unknown path (404), a body over the limit (413), a limit (429) or
 * an upstream failure (the upstream's status, its message kept).
 */
export class GatewayError extends Error {
  constructor(
    readonly status: number,
    readonly kind: GatewayErrorKind,
    message: string,
    readonly retryAfterMs?: number,
    /** The request field at fault, for the surfaces whose error shape names it (OpenAI's `param`). */
    readonly param?: string,
    /**
     * A code of the gateway's own, more specific than `kind` (`egress_denied`),
     * carried where each shape keeps one: see `withErrorCode` (error-response.ts).
     */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'GatewayError';
  }
}

export const invalidRequest = (message: string) => new GatewayError(400, 'invalid_request', message);
/** A 400 about one request field: `param` is its path in the surface's own style. */
export const invalidField = (param: string, message: string) =>
  new GatewayError(400, 'invalid_request', message, undefined, param);
export const unauthorized = (message: string) => new GatewayError(401, 'authentication', message);
export const forbidden = (message: string) => new GatewayError(403, 'permission', message);

/** The key does not grant the model asked for (403, code `model_not_granted`): said before any other check of it. */
export const modelNotGranted = (message: string) =>
  new GatewayError(403, 'permission', message, undefined, undefined, 'model_not_granted');

/**
 * The server's egress policy refuses the provider's address (403: retrying
 * cannot help, and the official SDKs retry every 5xx), or the address a
 * provider redirected to (502: the provider's answer is unusable).
 */
export const egressDenied = (status: 403 | 502, message: string) =>
  new GatewayError(
    status,
    status === 403 ? 'permission' : 'upstream',
    message,
    undefined,
    undefined,
    'egress_denied',
  );
