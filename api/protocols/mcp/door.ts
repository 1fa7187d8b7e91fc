import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  isLegacyRequest,
  type AuthInfo,
  type McpHandlerRequestOptions,
} from '@modelcontextprotocol/server';
import Joi from 'joi';
import type { Context } from 'koa';
import { NotFoundError, AppError, STATUS_MESSAGES } from '../../../core/errors.js';
import { ProjectsRepository } from '../../../core/repositories/projects.repository.js';
import { ExposedAgentsRepository } from '../../../core/repositories/exposed-agents.repository.js';
import type { AppDeps } from '../../deps.js';
import { ApiRouter } from '../../http/api-router.js';
import { ConverseService } from '../../services/converse.service.js';
import { RunCancelService } from '../../services/run-cancel.service.js';
import { RunEventsHub } from '../../services/run-events-hub.js';
import { approvalCodec } from './approval.js';
import { mcpAuth } from './auth.js';
import { buildServer, type DoorRequest, type McpDoorServices } from './server.js';
import { LegacySessions } from './sessions.js';

/** The endpoint MCP clients are given, per project. */
export const MCP_BASE = '/api/mcp/:project_id';

export const MCP_TAG = 'MCP server (agents as tools)';

/**
 * A 2025-11-25 session nobody used for this long is ended (its client opens a
 * new one): at least half an hour, and longer than a call may wait for its turn.
 */
const sessionIdleMs = (converseWaitMs: number) => Math.max(30 * 60_000, converseWaitMs + 5 * 60_000);

const JSON_TYPE = /^application\/(.+\+)?json$/i;

/**
 * The project's agents served over MCP's Streamable HTTP: 2026-07-28
 * requests (stateless, the revision and capabilities in each request) by
 * the SDK's per-request handler, 2025-era traffic by sessions of our own
 * (LegacySessions), one server factory for both.
 */
class McpEndpoint {
  private readonly projects: ProjectsRepository;
  private readonly legacy: LegacySessions;
  private readonly modern: ReturnType<typeof createMcpHandler>;
  private readonly node: ReturnType<typeof toNodeHandler>;

  constructor(private readonly deps: AppDeps) {
    this.projects = new ProjectsRepository(deps.db);
    const services: McpDoorServices = {
      deps,
      converse: new ConverseService(deps, new RunEventsHub(deps.db, deps.changes)),
      agents: new ExposedAgentsRepository(deps.db),
      codec: approvalCodec(deps.config.secretsKey!),
      cancels: new RunCancelService(deps),
    };
    const onerror = (err: Error) => deps.logger.warn({ err }, 'MCP door: request refused or failed');
    this.modern = createMcpHandler((ctx) => buildServer(services, ctx), { legacy: 'reject', onerror });
    this.legacy = new LegacySessions(
      (authInfo, request) =>
        Promise.resolve(buildServer(services, { era: 'legacy', authInfo, requestInfo: request })),
      sessionIdleMs(deps.config.session.converseWaitTimeoutMs),
      onerror,
    );
    this.node = toNodeHandler({ fetch: (request, opts) => this.route(request, opts) }, { onerror });
  }

  private async route(request: Request, opts: McpHandlerRequestOptions = {}): Promise<Response> {
    const { parsedBody, authInfo } = opts;
    if (await isLegacyRequest(request, parsedBody)) {
      const projectId = (authInfo!.extra as unknown as DoorRequest).projectId;
      return this.legacy.handle(request, parsedBody, authInfo!, projectId);
    }
    return this.modern.fetch(request, opts);
  }

  /** One HTTP request of the door: the project checked, then the SDK answers on the raw response. */
  async serve(ctx: Context, projectId: string): Promise<void> {
    if (ctx.method === 'POST' && !JSON_TYPE.test(ctx.request.type))
      throw new AppError(415, STATUS_MESSAGES[415]!, { reason: 'Content-Type must be application/json' });
    if (!(await this.projects.exists(projectId))) throw new NotFoundError('project');
    const extra: DoorRequest = {
      projectId,
      traceId: ctx.response.get('X-Trace-Id') || undefined,
      consoleBase: this.deps.config.publicUrl ?? `${ctx.protocol}://${ctx.host}`,
    };
    const auth: AuthInfo = { token: '', clientId: 'agent-server', scopes: [], extra: { ...extra } };
    const req = ctx.req as typeof ctx.req & { auth?: AuthInfo };
    req.auth = auth;
    // The SDK writes the answer (JSON or a stream) itself; Koa only logs and counts it.
    ctx.status = 200;
    ctx.respond = false;
    const body = (ctx.request as { body?: unknown }).body;
    await this.node(req, ctx.res, ctx.method === 'POST' ? body : undefined);
  }
}

/** The door's router: POST (every message), GET and DELETE (a 2025-11-25 session's stream and end). */
export function mcpRouter(deps: AppDeps): ApiRouter {
  const endpoint = new McpEndpoint(deps);
  const router = new ApiRouter(MCP_BASE, MCP_TAG, { guard: mcpAuth, raw: true }).access({
    read: 'project:operate',
    write: 'project:operate',
  });
  const params = Joi.object({ project_id: Joi.string().guid().required() });
  const serve = (ctx: Context, input: { params: { project_id: string } }) =>
    endpoint.serve(ctx, input.params.project_id);
  const description =
    "The project's agents that opt in (`expose.mcp`) as MCP tools, over Streamable HTTP: the 2026-07-28 revision " +
    '(stateless) and the 2025-11-25 session handshake. Each call is one converse turn. See docs/mcp-server.md.';
  return router
    .route(
      {
        method: 'post',
        path: '',
        summary: 'MCP: a JSON-RPC message (tools/list, tools/call, …)',
        description,
        request: { params, body: Joi.any() },
        produces: 'application/json, text/event-stream',
      },
      serve,
    )
    .route(
      {
        method: 'get',
        path: '',
        summary: "MCP: a 2025-11-25 session's stream",
        request: { params },
        produces: 'text/event-stream',
      },
      serve,
    )
    .route(
      { method: 'delete', path: '', summary: 'MCP: end a 2025-11-25 session', request: { params } },
      serve,
    );
}
