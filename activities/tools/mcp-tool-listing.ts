/**
 * Which MCP tools a turn offers the model: every configured server of the
 * agent listed in parallel, each entry's filters applied, names made unique
 * (tool-names.ts). A server's failure becomes a listing with `error`.
 */
import type { DbMcpServer } from '../../core/db/tables/index.js';
import { McpServersRepository } from '../../core/repositories/mcp-servers.repository.js';
import { inSpan } from '../../core/telemetry/tool-spans.js';
import { McpAuthorizationRequired, McpConnectionError } from '../../core/mcp/errors.js';
import {
  connectionSecrets,
  describeFailure,
  fetchToolList,
  withMcpClient,
  type McpToolInfo,
} from '../../core/mcp/mcp-client.js';
import {
  connectionOf,
  CONNECT_TIMEOUT_MS,
  errorMessage,
  headersOf,
  markError,
  scrub,
  type McpToolDeps,
} from './mcp-server-access.js';
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
  /** The server wants OAuth authorization first: the URL a person opens (its tools were not listed). */
  authorization_url?: string;
}

export interface McpToolListing {
  tools: OfferedMcpTool[];
  servers: McpServerListing[];
}

export const DEFAULT_LIST_TIMEOUT_MS = 10_000;
/** Descriptions beyond this are cut: the listing is an activity result and part of every model call. */
const MAX_DESCRIPTION_CHARS = 8_000;

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
  deps: McpToolDeps,
  row: DbMcpServer,
  headers: Record<string, string>,
  timeoutMs: number,
  endUserId: string | null,
): Promise<{ tools: McpToolInfo[] } | { error: string; type: string; authorizationUrl?: string }> {
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new Error(`no answer within ${timeoutMs} ms (timed out)`)),
    timeoutMs,
  );
  try {
    const tools = await withMcpClient(
      connectionOf(row, headers, endUserId, deps),
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
    if (err instanceof McpAuthorizationRequired) {
      const error = `MCP server "${row.name}" wants authorization: its tools were not offered`;
      return { error, type: 'authorization_required', authorizationUrl: err.authorizationUrl };
    }
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
  endUserId: string | null,
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

    const fetched = await fetchServerTools(deps, row, headers, timeoutMs, endUserId);
    if ('error' in fetched) {
      markError(span, fetched.type, fetched.error);
      const url = fetched.authorizationUrl;
      return failedListing(entry, {
        ...base,
        error: fetched.error,
        ...(url ? { authorization_url: url } : {}),
      });
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
  opts: { timeoutMs?: number; reservedNames?: string[]; endUserId?: string | null } = {},
): Promise<McpToolListing> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_LIST_TIMEOUT_MS;
  const endUserId = opts.endUserId ?? null;
  const perEntry = await Promise.all(entries.map((e) => listEntry(deps, projectId, e, timeoutMs, endUserId)));

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
