import type { Context, Next } from 'koa';
import { AppError, NotFoundError, STATUS_MESSAGES, ValidationError } from '../../core/errors.js';
import { failure } from '../http/envelope.js';
import { gatewayErrorResponse, isGatewayPath } from '../gateway/error-response.js';
import { BodiesBusyError } from '../http/body-reader.js';
import { isLangGraphPath, langGraphErrorResponse } from '../protocols/langgraph/errors.js';
import { a2aErrorResponse, isA2aPath } from '../protocols/a2a/errors.js';
import { isMcpPath, mcpErrorResponse } from '../protocols/mcp/errors.js';
import { isScimPath, scimErrorResponse } from '../protocols/scim/errors.js';

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  code?: string;
  constraint?: string;
  message?: string;
}

/**
 * Postgres refusing text it cannot store: a NUL in text (22021), `\u0000` in
 * jsonb (22P05), a lone surrogate in jsonb (22P02 "invalid input syntax for
 * type json": JSON.stringify writes nothing else that jsonb refuses).
 */
function isUnstorableText(err: HttpLikeError): boolean {
  return (
    err.code === '22021' ||
    err.code === '22P05' ||
    (err.code === '22P02' && /\btype json/.test(err.message ?? ''))
  );
}

/** Maps Postgres errors that are the client's doing; everything else stays a 500. */
function fromPostgres(err: HttpLikeError): AppError | undefined {
  switch (err.code) {
    case '23505': // unique_violation
      return new AppError(409, 'Conflict', { reason: 'already exists', constraint: err.constraint });
    case '23503': // foreign_key_violation
      return new AppError(409, 'Conflict', { reason: 'still referenced', constraint: err.constraint });
    default:
      // validate() refuses such strings with a 400 naming the field; this is the last line
      // for input that reached Postgres some other way.
      if (isUnstorableText(err))
        return new AppError(400, STATUS_MESSAGES[400]!, {
          reason: 'a value contains a character that cannot be stored (NUL or invalid Unicode)',
        });
      return undefined;
  }
}

/**
 * Framework errors (body parser, router) carry an HTTP status; keep it when it
 * is a client error, or the router's 501 for a method no route implements.
 */
function fromHttpError(err: HttpLikeError): AppError | undefined {
  const status = err.status ?? err.statusCode;
  if (status === 501) return new AppError(501, STATUS_MESSAGES[501]!);
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  if (status === 413)
    return new AppError(413, 'Payload too large', { reason: 'request body exceeds the size limit' });
  if (status === 400 && (err.type === 'entity.parse.failed' || /JSON/i.test(err.message ?? ''))) {
    return ValidationError.field('body', 'body is not valid JSON', 'body.parse');
  }
  return new AppError(status, err.message ?? 'Invalid request', {});
}

/**
 * First in the cascade: every error becomes the envelope. 5xx never show
 * internals; they are logged with the request id.
 */
export function errorHandler() {
  return async function errorHandlerMiddleware(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      // Nothing answered (no route, and the routers' allowedMethods found no 405 either).
      if (ctx.status === 404 && ctx.body == null) throw new NotFoundError();
    } catch (caught) {
      // The gateway imitates each vendor, errors included: its own formatter answers there.
      if (isGatewayPath(ctx.path)) return gatewayErrorResponse(ctx, caught);
      // So does the Agent Protocol, whose clients read `{detail}`.
      if (isLangGraphPath(ctx.path)) return langGraphErrorResponse(ctx, caught);
      // The A2A door answers JSON-RPC errors, which its clients read whatever the status.
      if (isA2aPath(ctx.path)) return a2aErrorResponse(ctx, caught);
      // And the MCP door, whose clients read JSON-RPC errors.
      if (isMcpPath(ctx.path)) return mcpErrorResponse(ctx, caught);
      // And SCIM, whose identity providers read its error schema.
      if (isScimPath(ctx.path)) return scimErrorResponse(ctx, caught);
      const err = caught as HttpLikeError;
      const appErr = caught instanceof AppError ? caught : (fromPostgres(err) ?? fromHttpError(err));
      const status = appErr?.status ?? 500;
      ctx.status = status;
      ctx.body = failure(status, appErr?.expose ? appErr.details : {});
      // A 501 is the caller's method, not our failure; a body refused for room was logged as a warning.
      if (status >= 500 && status !== 501 && !(caught instanceof BodiesBusyError)) {
        ctx.state.log.error({ err: caught, request_id: ctx.state.requestId }, 'request failed');
      } else if (!(caught instanceof AppError) && isUnstorableText(err)) {
        // A 400 all the same, but some route let such a string through validation.
        ctx.state.log.warn(
          { err: caught, request_id: ctx.state.requestId },
          'unstorable text reached Postgres',
        );
      }
      ctx.state.error = caught;
    }
  };
}
