import { once } from 'node:events';
import { A2A_PROTOCOL_VERSION, A2A_VERSION_HEADER, AgentCard } from '@a2a-js/sdk';
import { VersionNotSupportedError } from '@a2a-js/sdk/errors';
import { JsonRpcTransportHandler, ServerCallContext } from '@a2a-js/sdk/server';
import Joi from 'joi';
import type { Context } from 'koa';
import type { A2aAgentRow } from '../../../core/repositories/a2a-tasks.repository.js';
import type { AppDeps } from '../../deps.js';
import { ApiRouter } from '../../http/api-router.js';
import { openEventStream } from '../../http/sse.js';
import { AgentTasks } from './agent-tasks.js';
import { agentCard } from './card.js';
import { A2aAgentNotFoundError, rpcError } from './errors.js';
import { a2aServices, type A2aServices } from './services.js';

export const A2A_TAG = 'A2A';
const KEEPALIVE_MS = 15_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const JSON_TYPES = new Set(['application/json', 'application/a2a+json']);

type RpcResponse = Awaited<ReturnType<JsonRpcTransportHandler['handle']>>;
type RpcStream = Extract<RpcResponse, AsyncGenerator>;

const isStream = (r: RpcResponse): r is RpcStream =>
  typeof (r as RpcStream)[Symbol.asyncIterator] === 'function';

/** The agent the path names, when it is served over A2A; else the door's 404. */
async function exposedAgent(services: A2aServices, agentId: string | undefined): Promise<A2aAgentRow> {
  const agent = agentId && UUID.test(agentId) ? await services.tasks.exposedAgent(agentId) : undefined;
  if (!agent) throw new A2aAgentNotFoundError();
  return agent;
}

/** The path's agent id (the router's parameter). */
const agentIdOf = (ctx: Context): string | undefined =>
  (ctx as { params?: Record<string, string | undefined> }).params?.agent_id;

/** The server's address as clients reach it: PUBLIC_URL, else the request's own origin (its Host was checked). */
const baseUrl = (deps: AppDeps, ctx: Context) =>
  (deps.config.publicUrl || `${ctx.protocol}://${ctx.host}`).replace(/\/$/, '');

/**
 * The JSON-RPC answers, one response, or Server-Sent Events (one JSON-RPC
 * response per event) for SendStreamingMessage and SubscribeToTask. An error
 * before the first event is a plain JSON-RPC error; a client that leaves
 * stops its stream, never its task.
 */
async function answer(
  ctx: Context,
  out: RpcResponse,
  controller: AbortController,
  id: unknown,
): Promise<void> {
  if (!isStream(out)) {
    ctx.status = 200;
    ctx.body = out;
    return;
  }
  const rpcId = typeof id === 'string' || typeof id === 'number' ? id : null;
  let first: IteratorResult<unknown>;
  try {
    first = await out.next();
  } catch (err) {
    ctx.body = { jsonrpc: '2.0', id: rpcId, error: JsonRpcTransportHandler.mapToJSONRPCError(err) };
    return;
  }
  const res = openEventStream(ctx, { [A2A_VERSION_HEADER]: A2A_PROTOCOL_VERSION });
  const gone = () => controller.abort();
  res.once('close', gone);
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  const write = async (value: unknown) => {
    if (!res.write(`data: ${JSON.stringify(value)}\n\n`))
      await once(res, 'drain', { signal: controller.signal });
  };
  try {
    if (!first.done) await write(first.value);
    for await (const value of out) await write(value);
  } catch (err) {
    if (!controller.signal.aborted) {
      const error = JsonRpcTransportHandler.mapToJSONRPCError(err);
      res.write(`event: error\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: rpcId, error })}\n\n`);
    }
  } finally {
    clearInterval(keepalive);
    res.off('close', gone);
    await out.return(undefined).catch(() => undefined);
    if (!res.destroyed) res.end();
  }
}

/** One JSON-RPC request to an agent: version checked, dispatched by the SDK's transport to our tasks. */
async function rpc(ctx: Context, services: A2aServices, deps: AppDeps): Promise<void> {
  const agent = await exposedAgent(services, agentIdOf(ctx));
  const card = agentCard(agent, baseUrl(deps, ctx), tokenRequired(deps.config));
  ctx.set(A2A_VERSION_HEADER, A2A_PROTOCOL_VERSION);
  const body = (ctx.request as { body?: unknown }).body;
  const id = body && typeof body === 'object' ? (body as { id?: unknown }).id : null;
  const rpcId = typeof id === 'string' || typeof id === 'number' ? id : null;
  if (!JSON_TYPES.has(ctx.request.type.trim().toLowerCase())) {
    ctx.body = rpcError(rpcId, -32005, 'Content-Type must be application/json');
    return;
  }
  // Absent, the version is 0.3 (A2A §3.6): this door speaks 1.0 only.
  const version = ctx.get(A2A_VERSION_HEADER) || '0.3';
  if (version !== A2A_PROTOCOL_VERSION) {
    const err = new VersionNotSupportedError({
      message: `A2A-Version ${version} is not supported: send A2A-Version: ${A2A_PROTOCOL_VERSION}`,
    });
    ctx.body = { jsonrpc: '2.0', id: rpcId, error: JsonRpcTransportHandler.mapToJSONRPCError(err) };
    return;
  }
  const controller = new AbortController();
  const tasks = new AgentTasks(services, agent, card, {
    signal: controller.signal,
    traceId: ctx.response.get('X-Trace-Id') || undefined,
    log: ctx.state.log,
  });
  const call = new ServerCallContext({ requestedVersion: version });
  const out = await new JsonRpcTransportHandler(tasks).handle(body as Record<string, unknown>, call);
  await answer(ctx, out, controller, id);
}

/** The A2A door: each exposed agent's card (public) and its JSON-RPC endpoint (ADMIN_TOKEN as a bearer token). */
/** A credential is asked: in users mode always (an API token), in open mode when ADMIN_TOKEN is set. */
const tokenRequired = (config: AppDeps['config']): boolean =>
  config.auth.mode === 'users' || Boolean(config.adminToken);

export function a2aRouter(deps: AppDeps): ApiRouter {
  const services = a2aServices(deps);
  const params = Joi.object({ agent_id: Joi.string().max(200).required() });
  return new ApiRouter('/api/a2a/:agent_id', A2A_TAG, { raw: true })
    .access({ read: 'project:read', write: 'project:operate' })
    .route(
      {
        method: 'get',
        path: '/.well-known/agent-card.json',
        summary: "An agent's A2A agent card",
        description:
          'Readable without credentials: its name, description, skill, JSON-RPC interface, streaming, and the ' +
          'security scheme the endpoint takes (ADMIN_TOKEN as an HTTP bearer token). 404 unless the agent has ' +
          '`expose.a2a`.',
        request: { params },
        public: true,
      },
      async (ctx) => {
        const agent = await exposedAgent(services, agentIdOf(ctx));
        ctx.set(A2A_VERSION_HEADER, A2A_PROTOCOL_VERSION);
        ctx.body = AgentCard.toJSON(agentCard(agent, baseUrl(deps, ctx), tokenRequired(deps.config)));
      },
    )
    .route(
      {
        method: 'post',
        path: '/',
        summary:
          'A2A v1.0 JSON-RPC: SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask',
        description:
          'A task is a run of the agent and its contextId the conversation. Send `A2A-Version: 1.0`. Streaming ' +
          'methods answer Server-Sent Events, one JSON-RPC response each. Errors are JSON-RPC errors. See docs/a2a.md.',
        request: { params },
      },
      (ctx) => rpc(ctx, services, deps),
    );
}
