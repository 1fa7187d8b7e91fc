import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Middleware, Next } from 'koa';
import { UnauthorizedError } from '../../../core/errors.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * ADMIN_TOKEN as MCP clients send a credential: `Authorization: Bearer`.
 * Undefined when no token is set, as `npm start` runs: then the door is open
 * like the rest of the API.
 */
export function mcpAuth(adminToken: string | undefined): Middleware | undefined {
  if (!adminToken) return undefined;
  const expected = digest(adminToken);
  return async function mcpAuthMiddleware(ctx: Context, next: Next): Promise<void> {
    const bearer = /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'))?.[1]?.trim();
    if (!bearer || !timingSafeEqual(digest(bearer), expected)) throw new UnauthorizedError();
    await next();
  };
}
