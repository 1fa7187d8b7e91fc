import type { GatewayError } from '../../errors.js';

const TYPES: Record<GatewayError['kind'], { type: string; code: string | null }> = {
  invalid_request: { type: 'invalid_request_error', code: null },
  authentication: { type: 'invalid_request_error', code: 'invalid_api_key' },
  permission: { type: 'invalid_request_error', code: 'model_not_found' },
  not_found: { type: 'invalid_request_error', code: 'unknown_url' },
  request_too_large: { type: 'invalid_request_error', code: 'request_too_large' },
  rate_limit: { type: 'rate_limit_error', code: 'rate_limit_exceeded' },
  insufficient_quota: { type: 'insufficient_quota', code: 'insufficient_quota' },
  upstream: { type: 'api_error', code: null },
  timeout: { type: 'api_error', code: 'timeout' },
  internal: { type: 'api_error', code: null },
};

/** OpenAI's `{error:{message,type,param,code}}`. */
export function openaiErrorBody(err: GatewayError): unknown {
  return { error: { message: err.message, ...TYPES[err.kind], param: err.param ?? null } };
}
