import { trace } from '@opentelemetry/api';
import Joi from 'joi';
import type { Context } from 'koa';
import { NotFoundError } from '../../core/errors.js';
import { REDACTED } from '../../core/security/redact.js';
import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import type { Validated } from '../middleware/validate.js';
import { OidcLoginService } from '../services/oidc-login.service.js';

type LoginQuery = { return_to?: string };
type CallbackQuery = { state?: string; error?: string };

const param = Joi.string().allow('').max(4_096);

/** The console's sign-in page, showing why single sign-on did not sign the person in. */
const loginPageWith = (message: string) => `/console/login?error=${encodeURIComponent(message)}`;

function redirect(ctx: Context, location: string): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.redirect(location);
}

/**
 * Single sign-on with OpenID Connect (users mode with OIDC_ISSUER set): the
 * console's button leads to `login`, the provider sends the person back to
 * `callback`. Both are top-level browser navigations without a credential,
 * so public; the flow's state is what ties the two together. Every failure
 * ends on the console's sign-in page with a sentence saying why, never an
 * error page.
 */
export function oidcRoutes(deps: AppDeps): ApiRouter {
  const svc = new OidcLoginService(deps.db, deps.config, deps.logger);
  const requireEnabled = () => {
    if (!svc.enabled) throw new NotFoundError('single sign-on (AUTH_MODE=users with OIDC_ISSUER)');
  };
  return new ApiRouter('/api/agent-server/auth/oidc', 'Auth')
    .route<Validated<never, LoginQuery>>(
      {
        method: 'get',
        path: '/login',
        public: true,
        summary: 'Starts signing in with the identity provider (single sign-on)',
        description:
          'Redirects (302) to the OpenID provider (authorization code flow with PKCE S256, state and nonce). ' +
          '`return_to` is where the console sends the person once signed in: a path under /console on this ' +
          'server (anything else gives /console/). The login must be finished within 10 minutes. 404 when ' +
          'single sign-on is not configured.',
        request: { query: Joi.object({ return_to: param }).unknown(true) },
        produces: 'text/html',
      },
      async (ctx, { query }) => {
        requireEnabled();
        const started = await svc.begin(ctx, query.return_to);
        redirect(ctx, 'url' in started ? started.url : loginPageWith(started.refused));
      },
    )
    .route<Validated<never, CallbackQuery>>(
      {
        method: 'get',
        path: '/callback',
        public: true,
        summary: 'Where the identity provider sends the person back after signing in (single sign-on)',
        description:
          'Completes the login started by GET /api/agent-server/auth/oidc/login: the `state` names the flow ' +
          '(single use); the code is exchanged with PKCE; the ID token (issuer, audience, nonce) is checked. ' +
          'The person is the user linked to this identity, else the one with their verified email, else a ' +
          'new member (unless OIDC_JIT=false); their groups claim is kept for AUTH_GROUP_ROLES. On success ' +
          'the session cookie is set and the answer redirects to `return_to`; otherwise to the console’s ' +
          'sign-in page with `?error=` saying why.',
        request: { query: Joi.object({ state: param, error: param }).unknown(true) },
        produces: 'text/html',
      },
      async (ctx, { query }) => {
        requireEnabled();
        // The code and the state are credentials for a few minutes: not in the request's span.
        if (ctx.querystring) trace.getActiveSpan()?.setAttribute('url.query', REDACTED);
        const outcome = await svc.complete(ctx, query.state || undefined, query.error || undefined);
        redirect(ctx, outcome.ok ? outcome.returnTo : loginPageWith(outcome.message));
      },
    );
}
