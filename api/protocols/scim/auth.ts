import type { Context, Middleware, Next } from 'koa';
import { UnauthorizedError } from '../../../core/errors.js';
import { bearerOf, sameSecret } from '../../../core/auth/secrets.js';

/**
 * SCIM's own credential: SCIM_TOKEN as `Authorization: Bearer`, compared in
 * constant time. It is no user's and no ADMIN_TOKEN: an identity provider
 * holds it and nothing else. With no SCIM_TOKEN set, every request is a 401.
 */
export function scimAuth(scimToken: string | undefined): Middleware {
  return async function scimAuthMiddleware(ctx: Context, next: Next): Promise<void> {
    const presented = bearerOf(ctx.get('authorization'));
    if (!scimToken || !presented || !sameSecret(presented, scimToken)) throw new UnauthorizedError();
    await next();
  };
}
