import { publicBaseUrl } from '../../core/mcp/oauth/index.js';
import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import * as s from '../schemas/a2a-agents.schemas.js';
import { mcpServerAuthorizeResponse } from '../schemas/mcp-servers.schemas.js';
import type { Page } from '../schemas/common.schemas.js';
import { A2aAgentsService } from '../services/a2a-agents.service.js';

type Id = { id: string };
type Scope = { project_id: string };
type OptScope = { project_id?: string };

/** `/a2a-agents`: remote A2A agents that a project's agents may call as tools. */
export function a2aAgentRoutes(deps: AppDeps): ApiRouter {
  const svc = new A2aAgentsService(deps.db, deps.secrets, publicBaseUrl(deps.config));
  return new ApiRouter('/api/agent-server/a2a-agents', 'A2AAgents')
    .access({ read: 'project:read', write: 'project:develop', project: { table: 'a2a_agents' } })
    .route<Validated<never, Scope, s.A2aAgentCreateBody>>(
      {
        method: 'post',
        path: '/',
        summary: 'Register a remote A2A agent',
        request: s.a2aAgentCreate,
        response: s.a2aAgentResponse,
      },
      async (ctx, { query, body }) => ok(ctx, await svc.create(query.project_id, body)),
    )
    .route<Validated<never, Scope & Page>>(
      {
        method: 'get',
        path: '/',
        summary: "List a project's A2A agents",
        request: s.a2aAgentList,
        response: s.a2aAgentListResponse,
      },
      async (ctx, { query }) => ok(ctx, await svc.list(query.project_id, query)),
    )
    .route<Validated<Id, OptScope>>(
      {
        method: 'get',
        path: '/:id',
        summary: 'Get an A2A agent',
        request: s.a2aAgentGet,
        response: s.a2aAgentResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await svc.get(params.id, query.project_id)),
    )
    .route<Validated<Id, OptScope, s.A2aAgentUpdateBody>>(
      {
        method: 'patch',
        path: '/:id',
        summary: 'Update an A2A agent',
        description:
          '`headers` replaces the whole map; a value sent back as "[redacted]" keeps the stored one.',
        request: s.a2aAgentUpdate,
        response: s.a2aAgentResponse,
      },
      async (ctx, { params, query, body }) => ok(ctx, await svc.update(params.id, query.project_id, body)),
    )
    .route<Validated<Id, OptScope>>(
      {
        method: 'delete',
        path: '/:id',
        summary: 'Delete an A2A agent (409 while an agent lists it)',
        request: s.a2aAgentDelete,
      },
      async (ctx, { params, query }) => {
        await svc.delete(params.id, query.project_id);
        ok(ctx, {});
      },
    )
    .route<Validated<Id, OptScope>>(
      {
        method: 'post',
        path: '/:id/inspect',
        summary:
          'Fetch the agent card and list its skills as the tools they become (502 saying why when it cannot)',
        request: s.a2aAgentInspect,
        response: s.a2aInspectResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await svc.inspect(params.id, query.project_id)),
    )
    .route<Validated<Id, OptScope, { end_user_id?: string }>>(
      {
        method: 'post',
        path: '/:id/authorize',
        summary: "Start OAuth authorization with the A2A agent's authorization server",
        description:
          "Reads the agent card's OAuth 2 scheme (the flow for the configured grant, and its RFC 8414 metadata " +
          'when the card names it), uses the configured client, and answers `{authorization_url}` for a person to ' +
          'open (the authorization server sends them to `/oauth/callback`), or `{status: "authorized"}` when a ' +
          'token came without anyone (client_credentials, or a refresh). `end_user_id` only for an agent with ' +
          '`per_user_tokens`. 409 when the card offers no such flow, 502 when the card or the authorization ' +
          'server fails.',
        request: s.a2aAgentAuthorize,
        response: mcpServerAuthorizeResponse,
      },
      async (ctx, { params, query, body }) =>
        ok(ctx, await svc.authorize(params.id, query.project_id, body?.end_user_id)),
    )
    .route<Validated<Id, OptScope & { end_user_id?: string }>>(
      {
        method: 'delete',
        path: '/:id/authorization',
        summary:
          'Forget the OAuth tokens held for the A2A agent (revoked at the authorization server when it can)',
        description:
          "The project's own credentials, or an end user's (`end_user_id`, for an agent with `per_user_tokens`). " +
          'Revocation (RFC 7009) is best effort; the credentials are deleted either way.',
        request: s.a2aAgentDeauthorize,
      },
      async (ctx, { params, query }) => {
        await svc.deauthorize(params.id, query.project_id, query.end_user_id);
        ok(ctx, {});
      },
    );
}
