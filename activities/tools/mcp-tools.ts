/**
 * The agent's MCP tools: which tools a turn offers the model (listing every
 * configured server, filtering, making names unique) and calling one of them.
 * The session activities wrap these; nothing here touches Temporal, so a
 * listing or a call can be retried by the caller as it sees fit.
 */
import { SpanStatusCode, type Span } from '@opentelemetry/api';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { redactHeaders, type SecretBox } from '../../core/crypto/secrets.js';
import type { Db } from '../../core/db/knex.js';
import { McpServersRepository, type DbMcpServer } from '../../core/repositories/mcp-servers.repository.js';
import { inSpan } from '../../core/telemetry/tool-spans.js';
import { McpConnectionError } from '../../core/mcp/errors.js';
import {
  connectionSecrets,
  describeFailure,
  fetchToolList,
  withMcpClient,
  type McpServerConnection,
  type McpToolInfo,
} from '../../core/mcp/mcp-client.js';
import { DEFAULT_MAX_OUTPUT_CHARS, mcpResultText, truncateOutput } from './mcp-result.js';
import { assignToolNames } from './tool-names.js';

export interface AgentMcpEntry {
  mcp_server_id: string;
  tool_filters: string[];
  tools_requiring_approval: string[];
}

export interface OfferedMcpTool {
  /** Unique among offered tools and not in reservedNames; valid for every vendor: ^[a-zA-Z0-9_-]{1,64}$ */
  name: string;
  server_id: string;
  server_name: string;
  /** The server's own tool name. */
  tool: string;
  description?: string;
  input_schema: Record<string, unknown>;
  /** The tool (server's name) is listed in the entry's tools_requiring_approval. */
  requires_approval: boolean;
}

export interface McpServerListing {
  id: string;
  /** Empty when the server no longer exists. */
  name: string;
  transport: 'streamable_http' | 'sse';
  /** The entry's tool_filters as configured. */
  filters: string[];
  /** Every tool name the server listed. */
  listed: string[];
  /** The names offered (after filter and renaming), in the server's order. */
  offered: string[];
  /** Server tool name -> offered name, only where they differ. */
  renamed?: Record<string, string>;
  /** Filters naming tools the server did not list. */
  unmatched_filters?: string[];
  /** Could not connect / list: the turn goes on without this server's tools. */
  error?: string;
}

export interface McpToolListing {
  tools: OfferedMcpTool[];
  servers: McpServerListing[];
}

export interface McpToolDeps {
  db: Db;
  secrets: SecretBox;
}

export interface McpCallResult {
  output: string;
  isError: boolean;
  /** The request never reached the server (connect failed, or the server no longer exists): safe to retry. */
  notReached?: boolean;
}

export interface McpProgress {
  progress: number;
  total?: number;
  message?: string;
}

export const DEFAULT_LIST_TIMEOUT_MS = 10_000;
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** Connecting (initialize) never waits longer than this, whatever the call's timeout. */
const CONNECT_TIMEOUT_MS = 10_000;
/** Descriptions beyond this are cut: the listing is an activity result and part of every model call. */
const MAX_DESCRIPTION_CHARS = 8_000;

/**
 * Removes the values of credential-like headers (the ones the API redacts)
 * from a message before it is returned, stored, logged or traced; a bearer
 * token is also removed without its scheme.
 */
function scrub(message: string, headers: Record<string, string>): string {
  const redacted = redactHeaders(headers);
  let out = message;
  for (const [name, value] of Object.entries(headers)) {
    if (redacted[name] === value) continue; // not sensitive (e.g. a tenant name)
    const secrets = [value, /^\S+\s+(\S+)$/.exec(value)?.[1]].filter(
      (v): v is string => v !== undefined && v.length >= 4,
    );
    for (const v of secrets) out = out.split(v).join('[redacted]');
  }
  return out;
}

function headersOf(deps: McpToolDeps, row: DbMcpServer): Record<string, string> {
  return row.headers_enc ? deps.secrets.decryptJson<Record<string, string>>(row.headers_enc) : {};
}

function connectionOf(row: DbMcpServer, headers: Record<string, string>): McpServerConnection {
  return { endpoint: row.endpoint, transport: row.transport, headers };
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/* ------------------------------------------------------------------------ */
/* Listing                                                                   */
/* ------------------------------------------------------------------------ */

interface EntryListing {
  listing: McpServerListing;
  /** Tools passing the filter, in the server's order. */
  kept: McpToolInfo[];
  entry: AgentMcpEntry;
}

/** The listing of an entry whose server could not be listed: no tools, and why. */
function failedListing(
  entry: AgentMcpEntry,
  listing: Partial<McpServerListing> & { error: string },
): EntryListing {
  return {
    listing: {
      id: entry.mcp_server_id,
      name: '',
      transport: 'streamable_http',
      filters: [...entry.tool_filters],
      listed: [],
      offered: [],
      ...listing,
    },
    kept: [],
    entry,
  };
}

/** The server's tools (first of each name), or why they could not be listed and the span's error type. */
async function fetchServerTools(
  row: DbMcpServer,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<{ tools: McpToolInfo[] } | { error: string; type: string }> {
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new Error(`no answer within ${timeoutMs} ms (timed out)`)),
    timeoutMs,
  );
  try {
    const tools = await withMcpClient(
      connectionOf(row, headers),
      (client) =>
        fetchToolList(client, row.endpoint, {
          timeoutMs,
          signal: deadline.signal,
          secrets: connectionSecrets({ endpoint: row.endpoint, headers }),
        }).then(dedupeByName),
      { timeoutMs: Math.min(timeoutMs, CONNECT_TIMEOUT_MS), signal: deadline.signal },
    );
    return { tools };
  } catch (err) {
    const error = scrub(
      `MCP server "${row.name}" could not be listed: ${
        err instanceof McpConnectionError ? err.message : describeFailure(err)
      }`,
      headers,
    );
    return { error, type: deadline.signal.aborted ? 'timeout' : 'connection' };
  } finally {
    clearTimeout(timer);
  }
}

/** What the entry keeps of the server's tools (its filters) and the listing that records it. */
function keptTools(
  entry: AgentMcpEntry,
  base: Pick<McpServerListing, 'id' | 'name' | 'transport'>,
  listed: McpToolInfo[],
): EntryListing {
  const filters = [...entry.tool_filters];
  const wanted = new Set(filters);
  const kept = filters.length === 0 ? listed : listed.filter((t) => wanted.has(t.name));
  const names = new Set(listed.map((t) => t.name));
  const unmatched = filters.filter((f) => !names.has(f));
  return {
    listing: {
      ...base,
      filters,
      listed: listed.map((t) => t.name),
      offered: [],
      ...(unmatched.length > 0 ? { unmatched_filters: unmatched } : {}),
    },
    kept,
    entry,
  };
}

async function listEntry(
  deps: McpToolDeps,
  projectId: string,
  entry: AgentMcpEntry,
  timeoutMs: number,
): Promise<EntryListing> {
  return inSpan('mcp.tools.list', { 'mcp.server.id': entry.mcp_server_id }, async (span) => {
    const row = await new McpServersRepository(deps.db).findById(entry.mcp_server_id);
    if (!row || row.project_id !== projectId) {
      const error = `no MCP server with id ${entry.mcp_server_id} in this project (it was deleted?)`;
      markError(span, 'not_found', error);
      return failedListing(entry, { error });
    }
    span.setAttributes({ 'mcp.server.name': row.name, 'mcp.transport': row.transport });
    const base = { id: row.id, name: row.name, transport: row.transport };

    let headers: Record<string, string>;
    try {
      headers = headersOf(deps, row);
    } catch (err) {
      const error = `the headers of MCP server "${row.name}" cannot be decrypted: ${errorMessage(err)}`;
      markError(span, 'decrypt', error);
      return failedListing(entry, { ...base, error });
    }

    const fetched = await fetchServerTools(row, headers, timeoutMs);
    if ('error' in fetched) {
      markError(span, fetched.type, fetched.error);
      return failedListing(entry, { ...base, error: fetched.error });
    }
    const result = keptTools(entry, base, fetched.tools);
    span.setAttributes({ 'mcp.tools.listed': fetched.tools.length, 'mcp.tools.kept': result.kept.length });
    return result;
  });
}

/** A server listing one name twice would make the mapping back ambiguous: the first wins. */
function dedupeByName(tools: McpToolInfo[]): McpToolInfo[] {
  const seen = new Set<string>();
  return tools.filter((t) => (seen.has(t.name) ? false : (seen.add(t.name), true)));
}

function markError(span: Span, type: string, message: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: message.slice(0, 300) });
}

/**
 * Lists every entry's server in parallel (bounded by timeoutMs each), applies
 * filters, makes names unique (deterministically, see tool-names.ts), skips
 * reservedNames. A server that was deleted or cannot be reached gives an
 * McpServerListing with `error` and no tools. Never throws for a server's
 * failure (a database failure does throw, so the activity retries).
 */
export async function listAgentMcpTools(
  deps: McpToolDeps,
  projectId: string,
  entries: AgentMcpEntry[],
  opts: { timeoutMs?: number; reservedNames?: string[] } = {},
): Promise<McpToolListing> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_LIST_TIMEOUT_MS;
  const perEntry = await Promise.all(entries.map((e) => listEntry(deps, projectId, e, timeoutMs)));

  const candidates = perEntry.flatMap((r) => r.kept.map((info) => ({ r, info })));
  const names = assignToolNames(
    candidates.map(({ r, info }) => ({ tool: info.name, server_name: r.listing.name })),
    opts.reservedNames ?? [],
  );

  const tools: OfferedMcpTool[] = candidates.map(({ r, info }, i) => {
    const name = names[i]!;
    r.listing.offered.push(name);
    if (name !== info.name) (r.listing.renamed ??= {})[info.name] = name;
    return {
      name,
      server_id: r.listing.id,
      server_name: r.listing.name,
      tool: info.name,
      ...(info.description ? { description: info.description.slice(0, MAX_DESCRIPTION_CHARS) } : {}),
      input_schema: info.input_schema,
      requires_approval: r.entry.tools_requiring_approval.includes(info.name),
    };
  });
  return { tools, servers: perEntry.map((r) => r.listing) };
}

/* ------------------------------------------------------------------------ */
/* Calling                                                                   */
/* ------------------------------------------------------------------------ */

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** fetch failed before anything was written: the server cannot have seen the request. */
function neverSent(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  return typeof cause?.code === 'string' && NOT_SENT_CODES.has(cause.code);
}

/** Options of `callMcpTool`. */
export interface McpCallOptions {
  timeoutMs?: number;
  onProgress?: (p: McpProgress) => void;
  signal?: AbortSignal;
  /** Output beyond this many characters is cut with a note (default 100,000). */
  maxOutputChars?: number;
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
  server: { row: DbMcpServer; headers: Record<string, string> },
  name: string,
  args: Record<string, unknown>,
  opts: McpCallOptions & { timeoutMs: number },
  state: CallState,
) {
  const { timeoutMs, signal } = opts;
  return withMcpClient(
    connectionOf(server.row, server.headers),
    (client) => {
      state.sent = true;
      return client.callTool({ name, arguments: args }, undefined, {
        timeout: timeoutMs,
        resetTimeoutOnProgress: true,
        ...(signal ? { signal } : {}),
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
      });
    },
    { timeoutMs: Math.min(timeoutMs, CONNECT_TIMEOUT_MS), ...(signal ? { signal } : {}) },
  );
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
  if (err instanceof McpError && err.code === (ErrorCode.RequestTimeout as number)) {
    const output = `the tool "${tool}" on MCP server "${row.name}" timed out: no answer${
      state.progressCount > 0 ? ' or progress' : ''
    } within ${timeoutMs} ms`;
    return { result: { output, isError: true }, errorType: 'timeout' };
  }
  const what =
    err instanceof McpError
      ? `MCP server "${row.name}" answered the call to "${tool}" with an error: ${err.message}`
      : err instanceof Error && err.name === 'ZodError'
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
 *
 * Progress notifications call onProgress and reset the timeout.
 */
export async function callMcpTool(
  deps: McpToolDeps,
  tool: Pick<OfferedMcpTool, 'server_id' | 'server_name' | 'tool'>,
  args: Record<string, unknown>,
  opts: McpCallOptions = {},
): Promise<McpCallResult> {
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
      return { ...result, output: truncateOutput(result.output, maxChars) };
    };
    const server = await serverOf(deps, tool, span);
    if ('result' in server) return done(server);
    const state: CallState = { sent: false, progressCount: 0 };
    try {
      const result = await sendCall(server, tool.tool, args, { ...opts, timeoutMs }, state);
      span.setAttribute('mcp.progress.count', state.progressCount);
      return done({
        result: { output: scrub(mcpResultText(result), server.headers), isError: result.isError === true },
      });
    } catch (err) {
      span.setAttribute('mcp.progress.count', state.progressCount);
      if (signal?.aborted) throw signal.reason;
      return done(callFailure(err, server, tool.tool, timeoutMs, state));
    }
  });
}
