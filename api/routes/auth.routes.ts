import type { Context } from 'koa';
import type { AppDeps } from '../deps.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import * as s from '../schemas/auth.schemas.js';
import { AuthService } from '../services/auth.service.js';

const principalOf = (ctx: Context): Principal => ctx.state.principal!;

/**
 * Signing in and out of the console, and the first owner's setup. The login
 * routes are public (they are how a credential is obtained); the session
 * cookie they set is HTTP-only, and changes made with it carry the CSRF token.
 */
export function authRoutes(deps: AppDeps): ApiRouter {
  const auth = new AuthService(deps.db, deps.config);
  return new ApiRouter('/api/agent-server/auth', 'Auth')
    .route(
      {
        method: 'get',
        path: '/config',
        public: true,
        summary: 'How to sign in: the mode, whether the first owner is still to be created, single sign-on',
        response: s.authConfigResponse,
      },
      async (ctx) => ok(ctx, await auth.publicConfig()),
    )
    .route<Validated<never, never, s.SetupBody>>(
      {
        method: 'post',
        path: '/setup',
        public: true,
        summary: 'Create the first owner with the setup token, and sign them in',
        description:
          'Only while no user exists (409 after). The setup token is printed in the log when a server ' +
          'starts in users mode with no users (or is AUTH_SETUP_TOKEN); it works once.',
        request: s.setup,
        response: s.signedInResponse,
      },
      async (ctx, { body }) => ok(ctx, await auth.setup(ctx, body)),
    )
    .route<Validated<never, never, s.LoginBody>>(
      {
        method: 'post',
        path: '/login',
        public: true,
        summary: 'Sign in with a user name and password: sets the session cookie',
        description:
          'Answers the user and the CSRF token to send as x-csrf-token on every change made with the cookie. ' +
          'A wrong password, an unknown user and a deactivated one get the same 401.',
        request: s.login,
        response: s.signedInResponse,
      },
      async (ctx, { body }) => ok(ctx, await auth.login(ctx, body)),
    )
    .route(
      {
        method: 'post',
        path: '/logout',
        permission: 'signed-in',
        summary: 'Sign out: the session ends on every replica and the cookie is cleared',
      },
      async (ctx) => {
        await auth.logout(ctx, principalOf(ctx));
        ok(ctx, {});
      },
    )
    .route(
      {
        method: 'get',
        path: '/session',
        permission: 'signed-in',
        summary: "Who is calling: the user, the roles in effect, and the session's CSRF token",
        response: s.sessionResponse,
      },
      async (ctx) => ok(ctx, await auth.session(principalOf(ctx))),
    );
}
