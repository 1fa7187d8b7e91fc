import type { Context } from 'koa';
import { AppError, STATUS_MESSAGES } from '../../core/errors.js';

function tooLarge(ctx: Context, limit: number): AppError {
  // The rest of the body stays unread: the connection cannot be reused.
  ctx.set('Connection', 'close');
  return new AppError(413, STATUS_MESSAGES[413]!, {
    reason: `request body exceeds the size limit (${limit} bytes)`,
  });
}

/**
 * The request body as bytes, for routes taking non-JSON bodies (the body
 * parser handles JSON only). Stops reading, with 413, as soon as it passes
 * `limit`; the request is paused, not destroyed, so the 413 still gets out.
 */
export function readRawBody(ctx: Context, limit: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) return Promise.reject(tooLarge(ctx, limit));
  const req = ctx.req;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onData = (buf: Buffer) => {
      total += buf.length;
      if (total <= limit) return void chunks.push(buf);
      done();
      req.pause();
      reject(tooLarge(ctx, limit));
    };
    const onEnd = () => {
      done();
      resolve(Buffer.concat(chunks));
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    const onAborted = () => onError(new Error('request aborted'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}
