import type { Context, Middleware, Next } from 'koa';
import { ValidationError } from '../../../core/errors.js';
import { readBodyBytes } from '../../http/body-reader.js';

/** `__proto__` keys are refused, as the JSON body reader refuses them. */
const noProto = (k: string, v: unknown) => {
  if (k === '__proto__') throw new SyntaxError('a __proto__ key is not accepted');
  return v;
};

/**
 * A DELETE's JSON body (the SDK's `store.deleteItem` sends one), read with
 * the same limits as every body (MAX_BODY_BYTES, the idle timeout); the
 * router reads bodies of POST, PUT and PATCH only.
 */
export const deleteJsonBody: Middleware = async function deleteJsonBody(ctx: Context, next: Next) {
  if (ctx.request.body === undefined && ctx.is('json')) {
    const text = (await readBodyBytes(ctx)).toString('utf8');
    try {
      ctx.request.body = text.trim() === '' ? {} : (JSON.parse(text, noProto) as unknown);
    } catch {
      throw ValidationError.field('body', 'body is not valid JSON', 'body.parse');
    }
  }
  await next();
};
