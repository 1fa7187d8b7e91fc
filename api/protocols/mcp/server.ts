import {
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  Server,
  type CallToolRequest,
  type CallToolResult,
  type InputRequiredResult,
  type McpRequestContext,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { AppError, ConflictError, ValidationError } from '../../../core/errors.js';
import type { ExposedAgentsRepository } from '../../../core/repositories/exposed-agents.repository.js';
import type { AppDeps } from '../../deps.js';
import type { ConverseService } from '../../services/converse.service.js';
import type { RunCancelService } from '../../services/run-cancel.service.js';
import {
  approvalAnswer,
  approvalQuestion,
  canAsk,
  type ApprovalAnswer,
  type ApprovalState,
} from './approval.js';
import { argumentError, turnResult } from './results.js';
import { agentTools, callArguments, toolDefinition, type AgentTool } from './tools.js';
import { followTurn } from './turn.js';

/** What the door knows of each request, handed to the SDK as `authInfo.extra` (pass-through). */
export interface DoorRequest {
  projectId: string;
  traceId: string | undefined;
  /** PUBLIC_URL, or the address the caller used: where links point. */
  consoleBase: string;
}

/** What every per-request server shares: built once per app. */
export interface McpDoorServices {
  deps: AppDeps;
  converse: ConverseService;
  agents: ExposedAgentsRepository;
  codec: RequestStateCodec<ApprovalState>;
  cancels: RunCancelService;
}

const SERVER_INFO = { name: 'agent-server', title: "The project's agents", version: '1.0.0' };

function doorRequest(ctx: { authInfo?: { extra?: Record<string, unknown> } }): DoorRequest {
  const extra = ctx.authInfo?.extra as DoorRequest | undefined;
  if (!extra?.projectId) throw new ProtocolError(ProtocolErrorCode.InternalError, 'request context missing');
  return extra;
}

/**
 * The MCP server for one request (2026-07-28) or one session (2025-11-25):
 * tools only, each tool an agent of the project that opens this door, each
 * call one converse turn.
 */
export function buildServer(services: McpDoorServices, ctx: McpRequestContext): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions:
      "Each tool is an agent of this project. Send it a message; to continue a conversation pass the earlier answer's conversation_id (in the result's _meta).",
    requestState: { verify: (state, c) => services.codec.verify(state, c) },
  });
  // A session's requests each bring their own authInfo; the server's first one names the project.
  const project = doorRequest(ctx).projectId;

  const tools = async (): Promise<AgentTool[]> =>
    agentTools((await services.agents.list(project, 'mcp')).agents);

  server.setRequestHandler('tools/list', async () => ({ tools: (await tools()).map(toolDefinition) }));
  server.setRequestHandler('tools/call', async (request, c) => {
    const tool = (await tools()).find((t) => t.name === request.params.name);
    if (!tool)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return callTool(services, server, tool, request, c).catch(asProtocolError);
  });
  return server;
}

/**
 * What the services refuse, as JSON-RPC errors with their reason: bad input
 * (-32602, naming the field), a conflict or a service that cannot be reached
 * (-32603 with the reason: the SDK would otherwise send only the status's
 * word). Anything else goes on to the SDK's own internal error.
 */
function asProtocolError(err: unknown): never {
  if (!(err instanceof AppError) || !err.expose) throw err;
  if (err instanceof ValidationError)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      err.fields.map((f) => `${f.field}: ${f.message}`).join('; '),
    );
  const reason = err.details.reason ?? err.details.temporal;
  const message = typeof reason === 'string' ? reason : err.message;
  throw new ProtocolError(
    err.status < 500 ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InternalError,
    message,
  );
}

/**
 * Whether the call's end means the caller gave the turn up. On 2025-11-25 a
 * client cancels with `notifications/cancelled` (the signal's reason is its
 * reason), and a dropped stream is not a cancellation (the SDK's closed
 * connection); a 2026-07-28 client cancels by ending its request, so any end
 * of it is.
 */
function callerCancelled(c: ServerContext): boolean {
  if (c.mcpReq.envelope !== undefined) return true;
  return !(c.mcpReq.signal.reason instanceof SdkError);
}

/** Cancels the turn, keeping what it produced (`interrupt`); a turn that ended meanwhile is left. */
async function cancelTurn(services: McpDoorServices, projectId: string, runId: string): Promise<void> {
  try {
    await services.cancels.cancel(runId, projectId, 'interrupt');
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
  }
}

/** Sends the step as progress when the caller asked for it (a progressToken in `_meta`). */
function progressSender(c: ServerContext) {
  const token = c.mcpReq._meta?.progressToken;
  let count = 0;
  return async (_ev: unknown, message: string) => {
    if (token === undefined) return;
    count += 1;
    await c.mcpReq.notify({
      method: 'notifications/progress',
      params: { progressToken: token, progress: count, message },
    });
  };
}

/** Applies the person's answer to the paused run (all its pending calls); a run decided meanwhile is left as it is. */
async function decide(
  services: McpDoorServices,
  projectId: string,
  runId: string,
  answer: Exclude<ApprovalAnswer, 'undecided'>,
): Promise<void> {
  const view = await services.converse.view(runId, projectId);
  if (view.status !== 'awaiting_approval') return;
  const ids = view.pending_approvals.map((p) => String(p.id));
  try {
    await services.converse.approve(runId, projectId, {
      approved_call_ids: answer === 'approve' ? ids : [],
      rejected_call_ids: answer === 'reject' ? ids : [],
    });
  } catch (err) {
    // Someone decided first (in the console, or another call): follow the run as it is.
    if (!(err instanceof ConflictError)) throw err;
  }
}

/** A new turn for the call's message; undefined with the argument problem's result. */
async function startTurn(
  services: McpDoorServices,
  door: DoorRequest,
  tool: AgentTool,
  request: CallToolRequest,
): Promise<{ runId: string } | { refused: CallToolResult }> {
  const args = callArguments(request.params.arguments, tool.agent.mcpMessage);
  if ('problem' in args) return { refused: argumentError(args.problem) };
  const accepted = await services.converse.submit(
    door.projectId,
    {
      agent_id: tool.agent.id,
      message: args.message,
      ...(args.conversationId ? { conversation_id: args.conversationId } : {}),
    },
    door.traceId,
    { source: 'mcp' },
  );
  return { runId: accepted.run.id };
}

/**
 * One call: a new turn, or (a retry carrying an approval round's state and
 * answer) the paused turn it asked about, decided. Then the turn is followed
 * to its end or its next pause; a pause for approval asks the caller when it
 * can be asked, and is answered as a pause with the console's link otherwise
 * (also when the person dismissed the question without deciding).
 */
async function callTool(
  services: McpDoorServices,
  server: Server,
  tool: AgentTool,
  request: CallToolRequest,
  c: ServerContext,
): Promise<CallToolResult | InputRequiredResult> {
  const door = doorRequest(c.http ?? {});
  const { converse, deps } = services;
  const state = c.mcpReq.requestState<ApprovalState>();
  let runId: string;
  let ask = canAsk(c, server.getClientCapabilities());
  if (state) {
    if (state.agentId !== tool.agent.id)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'requestState belongs to another tool');
    runId = state.runId;
    const answer = approvalAnswer(c);
    if (answer === 'undecided') ask = false;
    else await decide(services, door.projectId, runId, answer);
  } else {
    const started = await startTurn(services, door, tool, request);
    if ('refused' in started) return started.refused;
    runId = started.runId;
  }
  const paused = async () => (await converse.view(runId, door.projectId)).status.startsWith('awaiting_');
  const followed = await followTurn(converse, runId, 0, {
    timeoutMs: deps.config.session.converseWaitTimeoutMs,
    signal: c.mcpReq.signal,
    onStep: progressSender(c),
    stillPaused: paused,
  });
  if (followed === 'aborted' && callerCancelled(c)) await cancelTurn(services, door.projectId, runId);
  const view = await converse.view(runId, door.projectId);
  if (view.status === 'awaiting_approval' && ask)
    return approvalQuestion(view, tool.agent.name, services.codec, c);
  return turnResult(view, { structured: tool.outputSchema !== undefined, consoleBase: door.consoleBase });
}
