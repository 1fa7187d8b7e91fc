/**
 * Following a tool call its server runs as a task (the MCP tasks extension,
 * core/mcp/tasks.ts): one `tasks/get` or `tasks/cancel`, each on a fresh
 * connection made as the call's was (headers, OAuth for the same end user,
 * the egress policy). Nothing is held between polls: whoever polls next
 * needs only the task's id and its server.
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import { McpAuthorizationRequired, McpConnectionError } from '../../core/mcp/errors.js';
import { describeFailure, withMcpClient } from '../../core/mcp/mcp-client.js';
import { cancelTask, getTask, type DetailedTask } from '../../core/mcp/tasks.js';
import { McpServersRepository } from '../../core/repositories/mcp-servers.repository.js';
import { inSpan } from '../../core/telemetry/tool-spans.js';
import { DEFAULT_MAX_OUTPUT_CHARS, mcpResultExtras, mcpResultText, truncateOutput } from './mcp-result.js';
import {
  connectionOf,
  CONNECT_TIMEOUT_MS,
  headersOf,
  markError,
  scrub,
  type McpToolDeps,
} from './mcp-server-access.js';
import type { McpCallResult } from './mcp-tool-call.js';

/** A task some call started: its server, the tool called, and the server's id of the task. */
export interface McpTaskRef {
  serverId: string;
  serverName: string;
  tool: string;
  taskId: string;
}

/** What one poll found. */
export type McpTaskState =
  /** Still running: the server's status message and suggested wait, when it gave them. */
  | { state: 'working'; message?: string; pollIntervalMs?: number }
  /** Over: what the model hears (the tool's own result when it completed). */
  | { state: 'done'; result: McpCallResult; status: string }
  /** The server could not be asked this time (a later poll may): why. */
  | { state: 'unreachable'; reason: string };

export interface McpTaskOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  endUserId?: string | null;
  maxOutputChars?: number;
}

/** The task's server and its decrypted headers; undefined when the server no longer exists. */
async function serverOf(deps: McpToolDeps, ref: McpTaskRef) {
  const row = await new McpServersRepository(deps.db).findById(ref.serverId);
  return row ? { row, headers: headersOf(deps, row) } : undefined;
}

/** One request on a fresh connection to the task's server, declaring the tasks extension. */
async function onServer<T>(
  deps: McpToolDeps,
  ref: McpTaskRef,
  opts: McpTaskOptions,
  fn: (client: Parameters<Parameters<typeof withMcpClient>[1]>[0], timeoutMs: number) => Promise<T>,
): Promise<{ value: T; headers: Record<string, string> } | undefined> {
  const server = await serverOf(deps, ref);
  if (!server) return undefined;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const value = await withMcpClient(
    connectionOf(server.row, server.headers, opts.endUserId ?? null, deps),
    (client) => fn(client, timeoutMs),
    {
      timeoutMs: Math.min(timeoutMs, CONNECT_TIMEOUT_MS),
      ...(opts.signal ? { signal: opts.signal } : {}),
      tasks: true,
    },
  );
  return { value, headers: server.headers };
}

const done = (output: string, status: string, isError = true): McpTaskState => ({
  state: 'done',
  status,
  result: { output, isError },
});

/** A terminal or unusable task as the model hears of it. */
function taskOutcome(ref: McpTaskRef, task: DetailedTask, headers: Record<string, string>, maxChars: number) {
  const what = `the task of "${ref.tool}" on MCP server "${ref.serverName}"`;
  const said = task.statusMessage ? `: ${task.statusMessage}` : '';
  switch (task.status) {
    case 'completed': {
      const result = task.result ?? {};
      const extras = mcpResultExtras(result);
      return {
        state: 'done',
        status: task.status,
        result: {
          output: truncateOutput(scrub(mcpResultText(result), headers), maxChars),
          isError: result.isError === true,
          ...(Object.keys(extras).length ? { extras } : {}),
        },
      } satisfies McpTaskState;
    }
    case 'failed': {
      const reason = task.error
        ? `${task.error.message} (code ${task.error.code})`
        : (task.statusMessage ?? 'no reason given');
      return done(scrub(`${what} failed: ${reason}`, headers), task.status);
    }
    case 'cancelled':
      return done(scrub(`${what} was cancelled by the server${said}`, headers), task.status);
    case 'input_required':
      return done(
        scrub(
          `${what} asked for input${said}; answering a task's questions is not supported, so the task was cancelled`,
          headers,
        ),
        task.status,
      );
    default:
      return {
        state: 'working',
        ...(task.statusMessage ? { message: scrub(task.statusMessage, headers) } : {}),
        ...(task.pollIntervalMs ? { pollIntervalMs: task.pollIntervalMs } : {}),
      } satisfies McpTaskState;
  }
}

/** A poll that failed: the task is over for the model, or the next poll may do better. */
function pollFailure(ref: McpTaskRef, err: unknown): McpTaskState {
  const what = `the task of "${ref.tool}" on MCP server "${ref.serverName}"`;
  if (err instanceof McpConnectionError) return { state: 'unreachable', reason: err.message };
  if (err instanceof McpAuthorizationRequired)
    return done(`${what} cannot be followed: the server wants authorization again`, 'unknown');
  if (err instanceof ProtocolError) {
    // The spec's answer for a task id the server does not know (never created, or expired).
    if (err.code === (ProtocolErrorCode.InvalidParams as number))
      return done(`${what} is no longer known to the server: ${err.message}`, 'unknown');
    return done(
      `${what} cannot be followed: the server answered tasks/get with an error: ${err.message}`,
      'unknown',
    );
  }
  // A timeout, a dropped connection, a malformed answer: a later poll may get through.
  return { state: 'unreachable', reason: describeFailure(err) };
}

/** The span attributes naming a task and its server. */
function taskAttributes(ref: McpTaskRef): Record<string, string> {
  return { 'mcp.server.id': ref.serverId, 'mcp.server.name': ref.serverName, 'mcp.task.id': ref.taskId };
}

/**
 * One `tasks/get`. An `input_required` task is cancelled (best effort) and
 * ends as an error result: its questions would need `tasks/update`.
 */
export async function pollMcpTask(
  deps: McpToolDeps,
  ref: McpTaskRef,
  opts: McpTaskOptions = {},
): Promise<McpTaskState> {
  const attributes = taskAttributes(ref);
  return inSpan(`mcp.tasks.get ${ref.tool}`, attributes, async (span) => {
    let state: McpTaskState;
    try {
      const polled = await onServer(deps, ref, opts, async (client, timeoutMs) => {
        const task = await getTask(client, ref.taskId, {
          timeoutMs,
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        if (task.status === 'input_required')
          await cancelTask(client, ref.taskId, { timeoutMs }).catch(() => undefined);
        return task;
      });
      state = polled
        ? taskOutcome(ref, polled.value, polled.headers, opts.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS)
        : done(
            `the tool "${ref.tool}" is unavailable: MCP server "${ref.serverName}" no longer exists`,
            'unknown',
          );
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      state = pollFailure(ref, err);
    }
    span.setAttribute('mcp.task.state', state.state);
    if (state.state === 'done') {
      span.setAttribute('mcp.task.status', state.status);
      if (state.result.isError) markError(span, 'tool_error', state.result.output);
    }
    return state;
  });
}

/** One `tasks/cancel`, best effort: whether the server acknowledged it. */
export async function cancelMcpTask(
  deps: McpToolDeps,
  ref: McpTaskRef,
  opts: McpTaskOptions = {},
): Promise<boolean> {
  const attributes = taskAttributes(ref);
  return inSpan(`mcp.tasks.cancel ${ref.tool}`, attributes, async () => {
    try {
      const sent = await onServer(deps, ref, opts, (client, timeoutMs) =>
        cancelTask(client, ref.taskId, { timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) }),
      );
      return sent !== undefined;
    } catch {
      return false;
    }
  });
}
