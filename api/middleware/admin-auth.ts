import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import { UnauthorizedError } from '../errors.js';

const OPEN_PATHS = [
  /^\/api\/agent-server\/health(\/ready)?\/?$/,
  /^\/api\/agent-server\/openapi\.json$/,
  /^\/api\/agent-server\/docs\/?$/,
];

const digest = (s: string) => createHash('sha256').update(s).digest();

/** When ADMIN_TOKEN is set, the configuration API requires it as a Bearer token (health and docs stay open). */
export function adminAuth(adminToken: string | undefined) {
  const expected = adminToken ? digest(adminToken) : undefined;
  return async function adminAuthMiddleware(ctx: Context, next: Next): Promise<void> {
    if (
      expected &&
      ctx.path.startsWith('/api/agent-server/') &&
      !OPEN_PATHS.some((re) => re.test(ctx.path))
    ) {
      const match = /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'));
      if (!match || !timingSafeEqual(digest(match[1]!.trim()), expected)) throw new UnauthorizedError();
    }
    await next();
  };
}
