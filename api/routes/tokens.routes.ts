import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/tokens.schemas.js';
import { TokensService } from '../services/tokens.service.js';

/**
 * API tokens for automation (and for Agent Protocol, MCP and A2A clients).
 * Anyone signed in manages their personal tokens; service tokens need an
 * organisation admin, which the service checks (the route is open to all).
 */
export function tokenRoutes(deps: AppDeps): ApiRouter {
  const tokens = new TokensService(deps.db);
  return new ApiRouter('/api/agent-server/tokens', 'Tokens')
    .access({ read: 'signed-in', write: 'signed-in' })
    .route<Validated<never, Page>>(
      {
        method: 'get',
        path: '/',
        summary: 'List my personal tokens (organisation admins: and every service token), newest first',
        request: s.tokenList,
        response: s.tokenListResponse,
      },
      async (ctx, { query }) => ok(ctx, await tokens.list(ctx.state.principal!, query)),
    )
    .route<Validated<never, never, s.TokenCreateBody>>(
      {
        method: 'post',
        path: '/',
        summary: 'Issue a token: the secret is in this answer only',
        description:
          'A personal token acts as you, never with more than your roles; given org_role or project_roles it holds less. ' +
          'A service token (org:admin) holds exactly the roles given.',
        request: s.tokenCreate,
        response: s.tokenCreateResponse,
      },
      async (ctx, { body }) => ok(ctx, await tokens.create(ctx, ctx.state.principal!, body)),
    )
    .route<Validated<{ id: string }>>(
      {
        method: 'delete',
        path: '/:id',
        summary: 'Revoke a token (yours, or any as an organisation admin)',
        request: s.tokenDelete,
        response: s.tokenResponse,
      },
      async (ctx, { params }) => ok(ctx, await tokens.revoke(ctx, ctx.state.principal!, params.id)),
    );
}
