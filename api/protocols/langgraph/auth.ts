import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Middleware, Next } from 'koa';
import { UnauthorizedError } from '../../../core/errors.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * ADMIN_TOKEN as the Agent Protocol's clients send it: `x-api-key` (the
 * SDK's `apiKey`) or `Authorization: Bearer`. Undefined when no token is set,
 * as `npm start` runs: then the door is open like the rest of the API.
 */
export function protocolAuth(adminToken: string | undefined): Middleware | undefined {
  if (!adminToken) return undefined;
  const expected = digest(adminToken);
  const matches = (given: string | undefined) =>
    given !== undefined && given !== '' && timingSafeEqual(digest(given), expected);
  return async function protocolAuthMiddleware(ctx: Context, next: Next): Promise<void> {
    const bearer = /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'))?.[1]?.trim();
    if (!matches(ctx.get('x-api-key') || undefined) && !matches(bearer)) throw new UnauthorizedError();
    await next();
  };
}
