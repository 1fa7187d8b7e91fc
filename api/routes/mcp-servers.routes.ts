import { publicBaseUrl } from '../../core/mcp/oauth/urls.js';
import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/mcp-servers.schemas.js';
import { McpOAuthService } from '../services/mcp-oauth.service.js';
import { McpServersService } from '../services/mcp-servers.service.js';

type Id = { id: string };
type Scope = { project_id: string };
type OptScope = { project_id?: string };

export function mcpServerRoutes(deps: AppDeps): ApiRouter {
  const svc = new McpServersService(deps.db, deps.secrets, publicBaseUrl(deps.config));
  const oauth = new McpOAuthService(deps.db, deps.secrets, publicBaseUrl(deps.config));
  return new ApiRouter('/api/agent-server/mcp-servers', 'MCPServers')
    .access({ read: 'project:read', write: 'project:develop', project: { table: 'mcp_servers' } })
    .route<Validated<never, Scope, s.McpServerCreateBody>>(
      {
        method: 'post',
        path: '/',
        summary: 'Register an MCP server',
        request: s.mcpServerCreate,
        response: s.mcpServerResponse,
      },
      async (ctx, { query, body }) => ok(ctx, await svc.create(query.project_id, body)),
    )
    .route<Validated<never, Scope & Page>>(
      {
        method: 'get',
        path: '/',
        summary: "List a project's MCP servers",
        request: s.mcpServerList,
        response: s.mcpServerListResponse,
      },
      async (ctx, { query }) => ok(ctx, await svc.list(query.project_id, query)),
    )
    .route<Validated<Id, OptScope>>(
      {
        method: 'get',
        path: '/:id',
        summary: 'Get an MCP server',
        request: s.mcpServerGet,
        response: s.mcpServerResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await svc.get(params.id, query.project_id)),
    )
    .route<Validated<Id, OptScope, s.McpServerUpdateBody>>(
      {
        method: 'patch',
        path: '/:id',
        summary: 'Update an MCP server',
        description:
          '`headers` replaces the whole map; a value sent back as "[redacted]" keeps the stored one.',
        request: s.mcpServerUpdate,
        response: s.mcpServerResponse,
      },
      async (ctx, { params, query, body }) => ok(ctx, await svc.update(params.id, query.project_id, body)),
    )
    .route<Validated<Id, OptScope>>(
      {
        method: 'delete',
        path: '/:id',
        summary: 'Delete an MCP server (409 while an agent uses it)',
        request: s.mcpServerDelete,
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
        summary: "Connect with the MCP SDK and list the server's tools (502 saying why when it cannot)",
        description:
          "With the project's own OAuth credentials. A server that needs authorization answers 409 with " +
          '`{reason, authorization_url}`: a person opens the URL, then inspect works.',
        request: s.mcpServerInspect,
        response: s.mcpInspectResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await svc.inspect(params.id, query.project_id)),
    )
    .route<Validated<Id, OptScope, s.McpServerAuthorizeBody>>(
      {
        method: 'post',
        path: '/:id/authorize',
        summary: 'Start OAuth authorization with the MCP server',
        description:
          "Discovers the server's authorization server (RFC 9728, RFC 8414), registers or uses the configured " +
          'client, and answers `{authorization_url}` for a person to open (the authorization server sends them to ' +
          '`/oauth/callback`), or `{status: "authorized"}` when a token came without anyone (client_credentials, ' +
          'or a refresh). `end_user_id` only for a server with `per_user_tokens`. 409 when the server does not use ' +
          'OAuth, 502 when discovery or the authorization server fails.',
        request: s.mcpServerAuthorize,
        response: s.mcpServerAuthorizeResponse,
      },
      async (ctx, { params, query, body }) =>
        ok(ctx, await oauth.authorize(params.id, query.project_id, body?.end_user_id)),
    )
    .route<Validated<Id, OptScope & { end_user_id?: string }>>(
      {
        method: 'delete',
        path: '/:id/authorization',
        summary:
          'Forget the OAuth tokens held for the MCP server (revoked at the authorization server when it can)',
        description:
          "The project's own credentials, or an end user's (`end_user_id`, for a server with `per_user_tokens`). " +
          'Revocation (RFC 7009) is best effort; the credentials are deleted either way.',
        request: s.mcpServerDeauthorize,
      },
      async (ctx, { params, query }) => {
        await oauth.deauthorize(params.id, query.project_id, query.end_user_id);
        ok(ctx, {});
      },
    );
}
