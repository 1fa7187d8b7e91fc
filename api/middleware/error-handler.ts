import type { Context, Next } from 'koa';
import { AppError, NotFoundError, ValidationError } from '../errors.js';
import { failure } from '../http/envelope.js';
import { GATEWAY_PREFIX, gatewayErrorResponse } from '../gateway/error-response.js';

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  code?: string;
  constraint?: string;
  message?: string;
}

/** Maps Postgres errors that are the client's doing; everything else stays a 500. */
function fromPostgres(err: HttpLikeError): AppError | undefined {
  switch (err.code) {
    case '23505': // unique_violation
      return new AppError(409, 'Conflict', { reason: 'already exists', constraint: err.constraint });
    case '23503': // foreign_key_violation
      return new AppError(409, 'Conflict', { reason: 'still referenced', constraint: err.constraint });
    default:
      return undefined;
  }
}

/** Framework errors (body parser, router) carry an HTTP status; keep it when it is a client error. */
function fromHttpError(err: HttpLikeError): AppError | undefined {
  const status = err.status ?? err.statusCode;
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
      if (ctx.path.startsWith(GATEWAY_PREFIX)) return gatewayErrorResponse(ctx, caught);
      const err = caught as HttpLikeError;
      const appErr = caught instanceof AppError ? caught : (fromPostgres(err) ?? fromHttpError(err));
      const status = appErr?.status ?? 500;
      ctx.status = status;
      ctx.body = failure(status, appErr?.expose ? appErr.details : {});
      if (status >= 500) {
        ctx.state.log.error({ err: caught, request_id: ctx.state.requestId }, 'request failed');
      }
      ctx.state.error = caught;
    }
  };
}
