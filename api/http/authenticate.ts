import type { Context, Middleware, Next } from 'koa';
import type { Config } from '../../core/config.js';
import type { Db } from '../../core/db/knex.js';
import { ForbiddenError, UnauthorizedError } from '../../core/errors.js';
import { principalOfApiToken, principalOfSession } from '../../core/auth/credentials.js';
import { ownerPrincipal, type Principal } from '../../core/auth/principal.js';
import { isOrgAdmin } from '../../core/auth/roles.js';
import { bearerOf, sameSecret } from '../../core/auth/secrets.js';
import { actorOf } from './actor.js';

/** The console session's cookie: HTTP-only, SameSite=Lax, Secure when PUBLIC_URL is https. */
export const SESSION_COOKIE = 'ags_session';
/** The header a cookie-authenticated change must carry: the session's CSRF token (GET /auth/session gives it). */
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface AuthDeps {
  config: Config;
  db: Db;
}

/**
 * The principal behind a request in users mode, or undefined: a bearer token
 * (or the door's API key header) is ADMIN_TOKEN or an API token; else the
 * console session cookie, whose changes must also carry the CSRF header.
 */
export async function principalOf(
  deps: AuthDeps,
  ctx: Context,
  apiKeyHeader?: string,
): Promise<Principal | undefined> {
  const { config, db } = deps;
  const presented =
    bearerOf(ctx.get('authorization')) ?? ((apiKeyHeader && ctx.get(apiKeyHeader)) || undefined);
  if (presented) {
    if (config.adminToken && sameSecret(presented, config.adminToken))
      return config.auth.adminTokenInUsersMode ? ownerPrincipal('admin_token', 'admin token') : undefined;
    return principalOfApiToken(db, config.auth.groupRoles, presented);
  }
  const cookie = ctx.cookies.get(SESSION_COOKIE);
  if (!cookie) return undefined;
  const session = await principalOfSession(db, config.auth.groupRoles, cookie);
  if (!session) return undefined;
  const { csrfToken, ...principal } = session;
  if (!SAFE_METHODS.has(ctx.method) && !sameSecret(ctx.get(CSRF_HEADER), csrfToken))
    throw new ForbiddenError(`a change made with the console session needs the ${CSRF_HEADER} header`);
  return principal;
}

/**
 * Users mode's guard in front of every non-public route: 401 (in the
 * surface's own error shape) without a valid credential. The principal is
 * left on ctx.state for the permission check, the audit log and handlers.
 */
export function usersGuard(deps: AuthDeps, apiKeyHeader?: string): Middleware {
  return async function usersGuardMiddleware(ctx: Context, next: Next): Promise<void> {
    const principal = await principalOf(deps, ctx, apiKeyHeader);
    if (!principal) throw new UnauthorizedError();
    ctx.state.principal = principal;
    await next();
  };
}

/** Open mode: whoever passed ADMIN_TOKEN's check (or, without one, anyone on loopback) holds everything. */
export function openPrincipal(config: Pick<Config, 'adminToken'>): Middleware {
  const principal = ownerPrincipal('open', actorOf(config));
  return async function openPrincipalMiddleware(ctx: Context, next: Next): Promise<void> {
    ctx.state.principal = principal;
    await next();
  };
}

/** Users mode's `/metrics` without METRICS_TOKEN: an organisation admin's credential (a 401 refusal stays a 401). */
export function adminMayScrape(deps: AuthDeps): (ctx: Context) => Promise<boolean> {
  return async (ctx) => {
    const principal = await principalOf(deps, ctx).catch(() => undefined);
    return principal !== undefined && isOrgAdmin(principal.orgRole);
  };
}
