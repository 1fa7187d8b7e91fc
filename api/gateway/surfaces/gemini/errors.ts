import type { GatewayError } from '../../errors.js';

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Google's `{error:{code,message,status}}`. */
export function geminiErrorBody(err: GatewayError): unknown {
  return { error: { code: err.status, message: err.message, status: STATUS[err.status] ?? 'UNKNOWN' } };
}
