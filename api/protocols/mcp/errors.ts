import type { Context } from 'koa';
import { AppError, STATUS_MESSAGES, ValidationError } from '../../../core/errors.js';

export const MCP_PREFIX = '/api/mcp/';

/** Whether a path is the MCP door's, whatever its case (its 404s come in its shape too). */
export const isMcpPath = (path: string): boolean =>
  path.length >= MCP_PREFIX.length && path.slice(0, MCP_PREFIX.length).toLowerCase() === MCP_PREFIX;

/** JSON-RPC's codes, and the one the door adds for a refused credential (in the server-defined range). */
export const JSONRPC = {
  parseError: -32700,
  invalidRequest: -32600,
  invalidParams: -32602,
  internalError: -32603,
  unauthorized: -32001,
} as const;

/** A JSON-RPC error answer with no request id (the request was refused before it was read as one). */
export function jsonRpcError(code: number, message: string, data?: unknown): Record<string, unknown> {
  return { jsonrpc: '2.0', id: null, error: { code, message, ...(data !== undefined ? { data } : {}) } };
}

interface HttpLike {
  status?: number;
  statusCode?: number;
}

function codeOf(status: number, caught: unknown): number {
  if (caught instanceof ValidationError)
    return caught.fields.some((f) => f.type === 'body.parse') ? JSONRPC.parseError : JSONRPC.invalidParams;
  if (status === 401) return JSONRPC.unauthorized;
  return status >= 500 ? JSONRPC.internalError : JSONRPC.invalidRequest;
}

function messageOf(err: AppError): string {
  if (err instanceof ValidationError) return err.fields.map((f) => `${f.field}: ${f.message}`).join('; ');
  const d = err.details;
  if (err.status === 404 && d.resource === 'project') return 'Project not found';
  if (typeof d.reason === 'string') return d.reason;
  return err.message || STATUS_MESSAGES[err.status] || 'Error';
}

/**
 * Every error under /api/mcp/ that reached the app's error handler (bad
 * path, refused credential or Host, unreadable body) as a JSON-RPC error
 * with its HTTP status. 5xx never show internals; they are logged with the
 * request id.
 */
export function mcpErrorResponse(ctx: Context, caught: unknown): void {
  let status = 500;
  let message: string = STATUS_MESSAGES[500]!;
  if (caught instanceof AppError) {
    status = caught.status;
    message = caught.expose ? messageOf(caught) : (STATUS_MESSAGES[status] ?? 'Error');
  } else {
    const s = (caught as HttpLike).status ?? (caught as HttpLike).statusCode;
    if (typeof s === 'number' && s >= 400 && s < 500) {
      status = s;
      message = STATUS_MESSAGES[s] ?? 'Error';
    }
  }
  ctx.status = status;
  if (status === 401) ctx.set('WWW-Authenticate', 'Bearer');
  ctx.body = jsonRpcError(codeOf(status, caught), message);
  if (status >= 500 && status !== 501)
    ctx.state.log.error({ err: caught, request_id: ctx.state.requestId }, 'request failed');
  ctx.state.error = caught;
}
