import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/mcp-servers.schemas.js';
import { McpServersService } from '../services/mcp-servers.service.js';

type Id = { id: string };
type Scope = { project_id: string };
type OptScope = { project_id?: string };

export function mcpServerRoutes(deps: AppDeps): ApiRouter {
  const svc = new McpServersService(deps.db, deps.secrets);
  return new ApiRouter('/api/agent-server/mcp-servers', 'MCPServers')
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
        request: s.mcpServerInspect,
        response: s.mcpInspectResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await svc.inspect(params.id, query.project_id)),
    );
}
