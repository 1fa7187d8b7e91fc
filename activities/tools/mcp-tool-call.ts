/**
 * Calling one MCP tool: its server loaded and reached for the call alone, the
 * result as text for the model, and every failure sorted into what the model
 * hears of it and what the caller may retry (a request that never went out).
 */
import type { Span } from '@opentelemetry/api';
import {
  ProtocolError,
  SdkError,
  SdkErrorCode,
  type CallToolResult,
  type Client,
  type InputRequiredResult,
  type Tool,
} from '@modelcontextprotocol/client';
import type { DbMcpServer } from '../../core/db/tables/index.js';
import { McpServersRepository } from '../../core/repositories/mcp-servers.repository.js';
import { inSpan, recordToolContent } from '../../core/telemetry/tool-spans.js';
import { McpAuthorizationRequired, McpConnectionError } from '../../core/mcp/errors.js';
import {
  describeFailure,
  withMcpClient,
  type ElicitHandler,
  type InputRounds,
} from '../../core/mcp/mcp-client.js';
import {
  isCreatedTask,
  taskStarted,
  type McpTaskStarted,
  type TaskPollBounds,
} from '../../core/mcp/tasks.js';
import { DEFAULT_MAX_OUTPUT_CHARS, mcpResultExtras, mcpResultText, truncateOutput } from './mcp-result.js';
import {
  connectionOf,
  CONNECT_TIMEOUT_MS,
  errorMessage,
  headersOf,
  markError,
  scrub,
  type McpToolDeps,
} from './mcp-server-access.js';
import type { OfferedMcpTool } from './mcp-tool-listing.js';

export interface McpCallResult {
  output: string;
  isError: boolean;
  /** The request never reached the server (connect failed, or the server no longer exists): safe to retry. */
  notReached?: boolean;
  /** The result's `structuredContent` and resource links, kept beside the text (see mcpResultExtras). */
  extras?: ReturnType<typeof mcpResultExtras>;
}

export interface McpProgress {
  progress: number;
  total?: number;
  message?: string;
}

export const DEFAULT_CALL_TIMEOUT_MS = 60_000;

/**
 * The `_meta` key of a `tools/call` request that carries the call's
 * idempotency key: the same on every attempt of one tool call, so a server
 * can perform a side effect once although a worker that died mid-call makes
 * the call arrive again (docs/api.md#idempotency-keys-for-mcp-server-authors).
 */
export const IDEMPOTENCY_KEY_META = 'io.agent-server/idempotency-key';

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** fetch failed before anything was written: the server cannot have seen the request. */
function neverSent(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  return typeof cause?.code === 'string' && NOT_SENT_CODES.has(cause.code);
}

/** The tool called: its server, its own name, and its input schema as listed. */
type McpCallTarget = Pick<OfferedMcpTool, 'server_id' | 'server_name' | 'tool'> &
  Partial<Pick<OfferedMcpTool, 'input_schema'>>;

/** Options of `callMcpTool`. */
export interface McpCallOptions {
  timeoutMs?: number;
  onProgress?: (p: McpProgress) => void;
  signal?: AbortSignal;
  /** Output beyond this many characters is cut with a note (default 100,000). */
  maxOutputChars?: number;
  /**
   * The caller follows tasks (the MCP tasks extension, 2026-07-28): the client
   * declares it, and a call its server runs as a task returns McpTaskStarted,
   * its first poll's wait kept within these bounds.
   */
  tasks?: TaskPollBounds;
  /** Sent as `_meta["io.agent-server/idempotency-key"]`: the same on every attempt of one call. */
  idempotencyKey?: string;
  /** Answers the server's questions during the call (elicitation); without it the client declares no such capability. */
  elicit?: ElicitHandler;
  /** A 2026-07-28 server's rounds of questions, kept durably: answered ones are resumed with their requestState. */
  rounds?: InputRounds;
  /** The person the call acts for: a server with per-user tokens uses theirs. */
  endUserId?: string | null;
}

/** What a call did before it ended: whether its request went out, and how many progress notifications came. */
interface CallState {
  sent: boolean;
  progressCount: number;
}

/** A result for the model and the span's error type (for errors). */
type Answer = { result: McpCallResult; errorType?: string };

/** The tool's server and its decrypted headers, or the answer when it cannot be reached. */
async function serverOf(
  deps: McpToolDeps,
  tool: Pick<OfferedMcpTool, 'server_id' | 'server_name' | 'tool'>,
  span: Span,
): Promise<{ row: DbMcpServer; headers: Record<string, string> } | Answer> {
  const row = await new McpServersRepository(deps.db).findById(tool.server_id);
  if (!row) {
    const output = `the tool "${tool.tool}" is unavailable: MCP server "${tool.server_name}" no longer exists`;
    return { result: { output, isError: true, notReached: true }, errorType: 'not_found' };
  }
  span.setAttribute('mcp.transport', row.transport);
  try {
    return { row, headers: headersOf(deps, row) };
  } catch (err) {
    const output = `the tool "${tool.tool}" is unavailable: the headers of MCP server "${row.name}" cannot be decrypted (${errorMessage(err)})`;
    return { result: { output, isError: true, notReached: true }, errorType: 'decrypt' };
  }
}

/** Connects and sends the call; progress notifications go to `onProgress` and reset the timeout. */
function sendCall(
  deps: McpToolDeps,
  server: { row: DbMcpServer; headers: Record<string, string> },
  tool: Pick<OfferedMcpTool, 'tool'> & Partial<Pick<OfferedMcpTool, 'input_schema'>>,
  args: Record<string, unknown>,
  opts: McpCallOptions & { timeoutMs: number },
  state: CallState,
) {
  const name = tool.tool;
  const { timeoutMs, signal, idempotencyKey, elicit } = opts;
  // The SDK adds its progress token to this `_meta`, keeping ours.
  const meta = idempotencyKey === undefined ? {} : { _meta: { [IDEMPOTENCY_KEY_META]: idempotencyKey } };
  return withMcpClient(
    connectionOf(server.row, server.headers, opts.endUserId ?? null, deps),
    (client) => {
      state.sent = true;
      const request = callRequestOptions(tool, opts, state);
      const params = { name, arguments: args, ...meta };
      // A 2026-07-28 server asks in rounds we keep; a 2025 one asks by request, answered by `elicit`.
      if (opts.rounds && client.getProtocolEra() === 'modern')
        return callInRounds(client, params, request, opts.rounds);
      return client.callTool(params, request);
    },
    {
      timeoutMs: Math.min(timeoutMs, CONNECT_TIMEOUT_MS),
      ...(signal ? { signal } : {}),
      ...(elicit ? { elicit } : {}),
      ...(opts.tasks ? { tasks: true } : {}),
    },
  );
}

type CallToolOptions = NonNullable<Parameters<Client['callTool']>[1]>;
type CallParams = Parameters<Client['callTool']>[0];

/** The call's request options: its timeout (reset by progress), cancellation, progress listener, tool schema. */
function callRequestOptions(
  tool: Pick<OfferedMcpTool, 'tool'> & Partial<Pick<OfferedMcpTool, 'input_schema'>>,
  opts: McpCallOptions & { timeoutMs: number },
  state: CallState,
): CallToolOptions {
  // The schema as listed: a 2026-07-28 client mirrors the arguments it marks (`x-mcp-header`) into
  // Mcp-Param-* headers, without listing the tools again on this connection.
  const definition = tool.input_schema
    ? { toolDefinition: { name: tool.tool, inputSchema: tool.input_schema as Tool['inputSchema'] } }
    : {};
  return {
    ...definition,
    timeout: opts.timeoutMs,
    resetTimeoutOnProgress: true,
    ...(opts.signal ? { signal: opts.signal } : {}),
    onprogress: (p) => {
      state.progressCount += 1;
      try {
        opts.onProgress?.({
          progress: p.progress,
          ...(p.total !== undefined ? { total: p.total } : {}),
          ...(p.message !== undefined ? { message: p.message } : {}),
        });
      } catch {
        // A failing progress listener must not fail the call.
      }
    },
  };
}

/** Rounds a call may take before the server's questions are given up on (a server asking forever). */
const MAX_INPUT_ROUNDS = 16;

/**
 * A call to a 2026-07-28 server, its questions answered round by round: a
 * round answered earlier is resumed at once (its answers and `requestState`),
 * then each `input_required` result is answered (durably, see InputRounds) and
 * the call retried with `inputResponses` and the server's `requestState`
 * unmodified, on a fresh request.
 */
async function callInRounds(
  client: Client,
  params: CallParams,
  request: CallToolOptions,
  rounds: InputRounds,
): Promise<CallToolResult> {
  let retry: Record<string, unknown> = (await rounds.resume()) ?? {};
  for (let round = 0; round < MAX_INPUT_ROUNDS; round++) {
    const result = (await client.callTool(
      { ...params, ...retry },
      {
        ...request,
        allowInputRequired: true,
      },
    )) as CallToolResult | InputRequiredResult;
    if (!isInputRequired(result)) return result;
    const inputResponses = await rounds.answer({
      inputRequests: result.inputRequests ?? {},
      ...(result.requestState !== undefined ? { requestState: result.requestState } : {}),
    });
    retry = {
      inputResponses,
      ...(result.requestState !== undefined ? { requestState: result.requestState } : {}),
    };
  }
  throw new Error(`the server kept asking questions: ${MAX_INPUT_ROUNDS} rounds answered without a result`);
}

function isInputRequired(result: CallToolResult | InputRequiredResult): result is InputRequiredResult {
  return (result as { resultType?: string }).resultType === 'input_required';
}

/** A failed call as the model hears of it; throws McpConnectionError when the request never reached the server. */
function callFailure(
  err: unknown,
  server: { row: DbMcpServer; headers: Record<string, string> },
  tool: string,
  timeoutMs: number,
  state: CallState,
): Answer {
  const { row, headers } = server;
  if (err instanceof McpConnectionError || (state.sent && neverSent(err) && !state.progressCount)) {
    const reason = err instanceof McpConnectionError ? err.message : describeFailure(err);
    throw new McpConnectionError(scrub(`MCP server "${row.name}": ${reason}`, headers));
  }
  if (err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout) {
    const output = `the tool "${tool}" on MCP server "${row.name}" timed out: no answer${
      state.progressCount > 0 ? ' or progress' : ''
    } within ${timeoutMs} ms`;
    return { result: { output, isError: true }, errorType: 'timeout' };
  }
  const what =
    err instanceof ProtocolError
      ? `MCP server "${row.name}" answered the call to "${tool}" with an error: ${err.message}`
      : (err instanceof SdkError && err.code === SdkErrorCode.InvalidResult) ||
          (err instanceof Error && err.name === 'ZodError')
        ? `MCP server "${row.name}" sent a malformed result for "${tool}": ${describeFailure(err)}`
        : `the call to "${tool}" on MCP server "${row.name}" failed: ${describeFailure(err)}`;
  return { result: { output: scrub(what, headers), isError: true }, errorType: 'protocol' };
}

/**
 * Calls one tool on its server (loading endpoint/transport/headers from the DB
 * by server_id, decrypting headers only for the call) and maps the result to
 * text for the model.
 *
 * - isError results → `{ isError: true, output: the server's message }`.
 * - A protocol error (unknown tool, invalid arguments, a JSON-RPC error), a
 *   malformed result, a connection lost mid-call, or a timeout →
 *   `{ isError: true, output: what went wrong }`.
 * - The server no longer exists / its headers cannot be decrypted →
 *   `{ isError: true, notReached: true }`.
 * - A connection failure before the request was sent → throws McpConnectionError.
 * - `signal` aborted → throws the signal's reason.
 * - With `tasks`, a call the server runs as a task → McpTaskStarted (followed
 *   with mcp-task-calls.ts).
 *
 * Progress notifications call onProgress and reset the timeout.
 */
export function callMcpTool(
  deps: McpToolDeps,
  tool: McpCallTarget,
  args: Record<string, unknown>,
  opts: McpCallOptions & { tasks: TaskPollBounds },
): Promise<McpCallResult | McpTaskStarted>;
export function callMcpTool(
  deps: McpToolDeps,
  tool: McpCallTarget,
  args: Record<string, unknown>,
  opts?: McpCallOptions,
): Promise<McpCallResult>;
export async function callMcpTool(
  deps: McpToolDeps,
  tool: McpCallTarget,
  args: Record<string, unknown>,
  opts: McpCallOptions = {},
): Promise<McpCallResult | McpTaskStarted> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const maxChars = opts.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  const { signal } = opts;
  signal?.throwIfAborted();

  const attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': tool.tool,
    'mcp.server.id': tool.server_id,
    'mcp.server.name': tool.server_name,
  };
  return inSpan(`mcp.tools.call ${tool.tool}`, attributes, async (span) => {
    const done = ({ result, errorType }: Answer): McpCallResult => {
      span.setAttribute('mcp.tool.is_error', result.isError);
      if (result.isError) markError(span, errorType ?? 'tool_error', result.output);
      const output = truncateOutput(result.output, maxChars);
      recordToolContent(span, args, output);
      return { ...result, output };
    };
    const server = await serverOf(deps, tool, span);
    if ('result' in server) return done(server);
    const state: CallState = { sent: false, progressCount: 0 };
    try {
      const result = await sendCall(deps, server, tool, args, { ...opts, timeoutMs }, state);
      span.setAttribute('mcp.progress.count', state.progressCount);
      if (opts.tasks && isCreatedTask(result)) {
        span.setAttribute('mcp.task.id', result.taskId);
        return taskStarted(tool.server_id, result, opts.tasks);
      }
      const extras = mcpResultExtras(result);
      return done({
        result: {
          output: scrub(mcpResultText(result), server.headers),
          isError: result.isError === true,
          // Only when the result said something beside its text.
          ...(Object.keys(extras).length ? { extras } : {}),
        },
      });
    } catch (err) {
      span.setAttribute('mcp.progress.count', state.progressCount);
      if (signal?.aborted) throw signal.reason;
      // Not a result: the run waits for the server's authorization, then calls again.
      if (err instanceof McpAuthorizationRequired) throw err;
      return done(callFailure(err, server, tool.tool, timeoutMs, state));
    }
  });
}
