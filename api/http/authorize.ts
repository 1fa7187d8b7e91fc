import type { Context, Middleware, Next } from 'koa';
import { ForbiddenError } from '../../core/errors.js';
import { allows } from '../../core/auth/roles.js';
import type { Principal } from '../../core/auth/principal.js';
import type { RegisteredRoute } from './api-router.js';
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
 * Before the body is read: a caller no project (nor the organisation role)
 * gives the route's permission is refused at once, whatever the input.
 */
export function authorizeAnywhere(route: Pick<RegisteredRoute, 'permission'>): Middleware {
  return async function authorizeAnywhereMiddleware(ctx: Context, next: Next): Promise<void> {
    if (!allows(principalIn(ctx), route.permission, 'any')) throw refusal(route);
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
