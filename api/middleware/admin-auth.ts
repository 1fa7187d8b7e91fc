import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Middleware, Next } from 'koa';
import { UnauthorizedError } from '../../core/errors.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The ADMIN_TOKEN check, as a guard in front of a matched route (ApiRouter
 * puts it before every route not declared `public`). It is decided by what
 * the router matched, never by comparing the raw path with a prefix: a path
 * spelled another way (`/API/…`, `//`, `%70`) either matches no route or is
 * guarded like the canonical one. Undefined when no token is configured.
 */
export function adminAuth(adminToken: string | undefined): Middleware | undefined {
  if (!adminToken) return undefined;
  const expected = digest(adminToken);
  return async function adminAuthMiddleware(ctx: Context, next: Next): Promise<void> {
    const match = /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'));
    // Digests of equal length, so timingSafeEqual never throws and the compare leaks no length.
    if (!match || !timingSafeEqual(digest(match[1]!.trim()), expected)) throw new UnauthorizedError();
    await next();
  };
}
