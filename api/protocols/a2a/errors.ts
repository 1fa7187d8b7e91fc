import {
  A2AError,
  RequestMalformedError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { Context } from 'koa';
import type { Logger } from '../../../core/logger.js';
import { AppError, NotFoundError, STATUS_MESSAGES, ValidationError } from '../../../core/errors.js';

export const A2A_PREFIX = '/api/a2a/';

/** Whether a path is the A2A door's, whatever its case (its errors come in JSON-RPC's shape). */
export const isA2aPath = (path: string): boolean =>
  path.length >= A2A_PREFIX.length && path.slice(0, A2A_PREFIX.length).toLowerCase() === A2A_PREFIX;

/** JSON-RPC's own codes for what is wrong with the request itself. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INTERNAL_ERROR = -32603;

/** Thrown when the path names no agent served over A2A (absent, or `expose.a2a` off). */
export class A2aAgentNotFoundError extends NotFoundError {
  constructor() {
    super('a2a_agent');
  }
}

function fieldsOf(err: ValidationError): string {
  return err.fields.map((f) => f.message).join('; ');
}

/**
 * Our errors in A2A's words, for the JSON-RPC answer: a field's problem is
 * InvalidParams naming it, a task that is not the agent's is TaskNotFound, a
 * refusal of the run's state (409) is UnsupportedOperation with its reason.
 * Anything else is an internal error that shows nothing (logged).
 */
export function toA2aError(err: unknown, log: Logger): Error {
  if (err instanceof A2AError) return err;
  if (err instanceof ValidationError)
    return new RequestMalformedError({
      message: fieldsOf(err),
      metadata: { field: err.fields[0]?.field ?? '' },
    });
  if (err instanceof NotFoundError) {
    const what = err.details.resource;
    if (what === 'run' || what === 'conversation') return new TaskNotFoundError();
    return new RequestMalformedError({
      message: `${typeof what === 'string' ? what : 'resource'} not found`,
    });
  }
  if (err instanceof AppError && err.expose && err.status < 500) {
    const reason = typeof err.details.reason === 'string' ? err.details.reason : err.message;
    return new UnsupportedOperationError({ message: reason });
  }
  if (err instanceof AppError && err.status === 503)
    return new Error('Temporarily unavailable: the task service could not be reached; try again');
  log.error({ err }, 'A2A request failed');
  return new Error(STATUS_MESSAGES[500]);
}

export interface RpcErrorBody {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string };
}

export const rpcError = (id: string | number | null, code: number, message: string): RpcErrorBody => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});

/**
 * An error before the method ran (credentials, Host, body, path) as JSON-RPC's
 * code and the HTTP status. Bad input to a JSON-RPC POST is answered 200, as
 * JSON-RPC over HTTP does; to a GET (the card), 400.
 */
function httpRpcError(caught: unknown, method: string): { status: number; code: number; message: string } {
  if (caught instanceof ValidationError) {
    const parse = caught.fields.some((f) => f.type === 'body.parse');
    return {
      status: method === 'POST' ? 200 : 400,
      code: parse ? PARSE_ERROR : INVALID_REQUEST,
      message: parse ? 'Parse error: the body is not valid JSON' : fieldsOf(caught),
    };
  }
  if (caught instanceof A2aAgentNotFoundError)
    return {
      status: 404,
      code: INVALID_REQUEST,
      message: 'No A2A agent here: unknown agent, or not exposed over A2A (expose.a2a)',
    };
  const status = caught instanceof AppError ? caught.status : ((caught as { status?: number }).status ?? 500);
  if (status === 401)
    return {
      status,
      code: INVALID_REQUEST,
      message: 'Unauthorized: send a token (an API token, or ADMIN_TOKEN) as Authorization: Bearer <token>',
    };
  if (status === 405 || status === 501)
    return { status, code: METHOD_NOT_FOUND, message: 'Method not allowed: POST JSON-RPC requests' };
  if (status >= 400 && status < 500) {
    const reason =
      caught instanceof AppError && typeof caught.details.reason === 'string'
        ? caught.details.reason
        : undefined;
    return { status, code: INVALID_REQUEST, message: reason ?? STATUS_MESSAGES[status] ?? 'Invalid request' };
  }
  return { status: 500, code: INTERNAL_ERROR, message: STATUS_MESSAGES[500]! };
}

/**
 * Every error under /api/a2a/ that did not come from a method, in JSON-RPC's
 * shape (`{jsonrpc, id: null, error: {code, message}}`): the SDK's client
 * reads it from any status. 5xx never show internals; they are logged.
 */
export function a2aErrorResponse(ctx: Context, caught: unknown): void {
  const { status, code, message } = httpRpcError(caught, ctx.method);
  ctx.status = status;
  if (status === 401) ctx.set('WWW-Authenticate', 'Bearer');
  ctx.body = rpcError(null, code, message);
  if (status >= 500) ctx.state.log.error({ err: caught, request_id: ctx.state.requestId }, 'request failed');
  ctx.state.error = caught;
}
