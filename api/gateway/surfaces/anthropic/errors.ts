import type { GatewayError } from '../../errors.js';

const TYPES: Record<GatewayError['kind'], string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  permission: 'permission_error',
  not_found: 'not_found_error',
  request_too_large: 'request_too_large',
  rate_limit: 'rate_limit_error',
  insufficient_quota: 'rate_limit_error',
  upstream: 'api_error',
  timeout: 'timeout_error',
  internal: 'api_error',
};

/** Anthropic's `{type:"error",error:{type,message}}`. */
export function anthropicErrorBody(err: GatewayError): unknown {
  return { type: 'error', error: { type: TYPES[err.kind], message: err.message } };
}
