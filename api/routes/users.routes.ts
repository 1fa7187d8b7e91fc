import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import { userResponse } from '../schemas/auth.schemas.js';
import * as s from '../schemas/users.schemas.js';
import { UsersService } from '../services/users.service.js';

type Id = { id: string };

/** The organisation's users, managed by owners and admins (only owners touch the owner role). */
export function userRoutes(deps: AppDeps): ApiRouter {
  const users = new UsersService(deps.db);
  return new ApiRouter('/api/agent-server/users', 'Users')
    .access({ read: 'org:admin', write: 'org:admin' })
    .route<Validated<never, s.UserListQuery>>(
      {
        method: 'get',
        path: '/',
        summary: 'List users, newest first',
        request: s.userList,
        response: s.userListResponse,
      },
      async (ctx, { query }) => ok(ctx, await users.list(query)),
    )
    .route<Validated<never, never, s.UserCreateBody>>(
      {
        method: 'post',
        path: '/',
        summary: 'Create a user',
        description:
          'Without a password the user signs in by single sign-on only. Only an owner may create an owner.',
        request: s.userCreate,
        response: userResponse,
      },
      async (ctx, { body }) => ok(ctx, await users.create(ctx, ctx.state.principal!, body)),
    )
    .route<Validated<Id>>(
      { method: 'get', path: '/:id', summary: 'Get a user', request: s.userGet, response: userResponse },
      async (ctx, { params }) => ok(ctx, await users.get(params.id)),
    )
    .route<Validated<Id, never, s.UserUpdateBody>>(
      {
        method: 'patch',
        path: '/:id',
        summary: 'Update a user: names, role, active, password',
        description:
          'Deactivating signs the user out everywhere and stops their tokens at once. ' +
          'The last active owner cannot be demoted or deactivated (409).',
        request: s.userUpdate,
        response: userResponse,
      },
      async (ctx, { params, body }) =>
        ok(ctx, await users.update(ctx, ctx.state.principal!, params.id, body)),
    )
    .route<Validated<Id>>(
      {
        method: 'delete',
        path: '/:id',
        summary: 'Delete a user, their sessions, personal tokens and project roles',
        description: 'The last active owner cannot be deleted (409).',
        request: s.userDelete,
      },
      async (ctx, { params }) => {
        await users.delete(ctx, ctx.state.principal!, params.id);
        ok(ctx, {});
      },
    );
}
