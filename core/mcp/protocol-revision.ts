/**
 * Which MCP protocol revision we speak with a server: the one place that
 * decides. Servers of both eras exist:
 * - 2026-07-28 and later ("modern"): no session handshake; `server/discover`,
 *   the version and capabilities in every request's `_meta`, the
 *   `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers, questions
 *   as `input_required` results;
 * - 2025-era ("legacy"): the `initialize` handshake, questions as
 *   server-to-client requests.
 * A Streamable HTTP server is probed with `server/discover` at its first
 * connection (the client falls back to `initialize` on any legacy answer);
 * the verdict is remembered on the server's row, so later connections skip
 * the probe (a modern one adopts its stored discover result: no round trip
 * at all). The SSE transport exists only in the 2025 era. A remembered
 * verdict is trusted for a day: a legacy server that upgrades still answers
 * `initialize`, so only a fresh probe would notice.
 */
import type { Client, ClientOptions, DiscoverResult, PriorDiscovery } from '@modelcontextprotocol/client';
import type { Db } from '../db/knex.js';
import type { DbMcpServer, McpServerProtocol } from '../db/tables/index.js';
import { McpServersRepository } from '../repositories/mcp-servers.repository.js';

export type McpTransportKind = 'streamable_http' | 'sse';

/** How long a remembered verdict is trusted before the server is probed again. */
export const PROTOCOL_MEMORY_MS = 24 * 60 * 60 * 1000;

/** What a connection knows and learns of its server's revision. */
export interface ProtocolMemory {
  /** The verdict remembered on the server's row, if any. */
  known: McpServerProtocol | null;
  /** Called when a connection learnt something other than `known`. */
  learnt(protocol: McpServerProtocol | null): Promise<void>;
}

/** The memory kept on the server's row (`mcp_servers.protocol`). */
export function protocolMemory(db: Db, row: Pick<DbMcpServer, 'id' | 'protocol'>): ProtocolMemory {
  const repo = new McpServersRepository(db);
  return { known: row.protocol, learnt: (protocol) => repo.rememberProtocol(row.id, protocol) };
}

/** The client's negotiation setting for a transport. */
export function negotiationFor(transport: McpTransportKind): ClientOptions['versionNegotiation'] {
  return transport === 'sse' ? { mode: 'legacy' } : { mode: 'auto' };
}

/** The remembered verdict as the client's `connect({prior})` takes it, when still fresh. */
export function priorOf(
  transport: McpTransportKind,
  known: McpServerProtocol | null,
  now = Date.now(),
): PriorDiscovery | undefined {
  if (transport === 'sse' || !known) return undefined;
  if (now - Date.parse(known.learnt_at) > PROTOCOL_MEMORY_MS) return undefined;
  if (known.era === 'legacy') return { kind: 'legacy' };
  return known.discover ? { kind: 'modern', discover: known.discover as DiscoverResult } : undefined;
}

/** What a connected client learnt of its server. */
export function verdictOf(client: Client, now = new Date()): McpServerProtocol | null {
  const era = client.getProtocolEra();
  if (!era) return null;
  const version = client.getNegotiatedProtocolVersion() ?? null;
  const discover = era === 'modern' ? client.getDiscoverResult() : undefined;
  return {
    era,
    version,
    ...(discover ? { discover: JSON.parse(JSON.stringify(discover)) as Record<string, unknown> } : {}),
    learnt_at: now.toISOString(),
  };
}

/** Whether `learnt` should replace `known` on the row (a new era or version, or a stale verdict). */
export function worthRemembering(
  known: McpServerProtocol | null,
  learnt: McpServerProtocol | null,
  now = Date.now(),
): boolean {
  if (!learnt) return false;
  if (!known) return true;
  if (known.era !== learnt.era || known.version !== learnt.version) return true;
  return now - Date.parse(known.learnt_at) > PROTOCOL_MEMORY_MS;
}
