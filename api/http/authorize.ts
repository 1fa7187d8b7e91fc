import type { Context, Middleware, Next } from 'koa';
import { ForbiddenError } from '../../core/errors.js';
import { allows } from '../../core/auth/roles.js';
import type { Principal } from '../../core/auth/principal.js';
import type { RegisteredRoute } from './route-spec.js';
import type { AuthDeps } from './authenticate.js';
import { projectOf } from './project-of.js';

/** What users mode needs at mount time: the configuration and the database. */
export type AccessRuntime = AuthDeps;

const principalIn = (ctx: Context): Principal => {
  const principal = ctx.state.principal;
  if (!principal) throw new Error('the permission check ran before the guard');
  return principal;
};

const refusal = (route: Pick<RegisteredRoute, 'permission'>) =>
  new ForbiddenError(`needs ${route.permission}`, { permission: route.permission });

/**
 * The project a request names before its input is read: the path's
 * `project_id`; the project of the resource its path names (raw path
 * parameters: a malformed one names nothing, and validation answers it);
 * or `?project_id=` on a route whose path names nothing else.
 */
async function namedProject(
  deps: AccessRuntime,
  ctx: Context,
  route: Pick<RegisteredRoute, 'fullPath' | 'project'>,
): Promise<string | undefined> {
  const params = (ctx as { params?: Record<string, string> }).params ?? {};
  const query = route.fullPath.includes(':') ? {} : { project_id: ctx.query.project_id };
  const located = await projectOf(deps.db, route.project, { params, query }).catch(() => undefined);
  return typeof located === 'string' && UUID.test(located) ? located : undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Before the body is read: a caller no project (nor the organisation role)
 * gives the route's permission is refused at once, whatever the input; so is
 * one the project named by the path or query does not give it. The check
 * after validation (authorizeProject) still decides for the input as read.
 */
export function authorizeAnywhere(
  deps: AccessRuntime,
  route: Pick<RegisteredRoute, 'permission' | 'fullPath' | 'project'>,
): Middleware {
  return async function authorizeAnywhereMiddleware(ctx: Context, next: Next): Promise<void> {
    const principal = principalIn(ctx);
    if (!allows(principal, route.permission, 'any')) throw refusal(route);
    if (route.permission.startsWith('project:') && !allows(principal, route.permission)) {
      const named = await namedProject(deps, ctx, route);
      if (named && !allows(principal, route.permission, named)) throw refusal(route);
    }
    await next();
  };
}

/**
 * After validation, for project permissions: the project the request is
 * about must give it. A request naming no project (a list across projects)
 * needs the organisation role.
 */
export function authorizeProject(
  deps: AccessRuntime,
  route: Pick<RegisteredRoute, 'permission' | 'project'>,
): Middleware {
  return async function authorizeProjectMiddleware(ctx: Context, next: Next): Promise<void> {
    if (route.permission.startsWith('project:')) {
      const projectId = await projectOf(deps.db, route.project, ctx.state.input ?? {});
      if (!allows(principalIn(ctx), route.permission, projectId))
        throw new ForbiddenError(
          projectId
            ? `needs ${route.permission} in project ${projectId}`
            : `needs ${route.permission}: name a project (project_id) you hold a role in`,
          { permission: route.permission },
        );
    }
    await next();
  };
}
