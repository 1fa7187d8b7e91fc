/**
 * What listing and calling share: the dependencies, reaching a server's
 * connection (its headers decrypted only here), scrubbing header values out of
 * any message, and marking a span as failed.
 */
import { SpanStatusCode, type Span } from '@opentelemetry/api';
import { redactHeaders, type SecretBox } from '../../core/crypto/secrets.js';
import type { Db } from '../../core/db/knex.js';
import type { DbMcpServer } from '../../core/db/tables/index.js';
import type { McpServerConnection } from '../../core/mcp/mcp-client.js';
import { protocolMemory } from '../../core/mcp/protocol-revision.js';
import { mcpOAuthProvider } from '../../core/mcp/oauth/index.js';

export interface McpToolDeps {
  db: Db;
  secrets: SecretBox;
  /** The API's public base URL (`publicBaseUrl(config)`): where authorization servers send people back. */
  publicUrl: string;
}

/** Connecting (initialize) never waits longer than this, whatever the call's timeout. */
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Removes the values of credential-like headers (the ones the API redacts)
 * from a message before it is returned, stored, logged or traced; a bearer
 * token is also removed without its scheme.
 */
export function scrub(message: string, headers: Record<string, string>): string {
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

/** The server's headers, decrypted for one listing or call (never stored decrypted). */
export function headersOf(deps: McpToolDeps, row: DbMcpServer): Record<string, string> {
  return row.headers_enc ? deps.secrets.decryptJson<Record<string, string>>(row.headers_enc) : {};
}

/**
 * A server's connection. Given the tool deps, OAuth is attached for
 * `endUserId` (null: the project's own credentials; an end user's are used
 * only when the server keeps tokens per end user). Every HTTP server gets it:
 * without stored tokens nothing is added to a request, and a server that
 * answers 401 with an OAuth challenge leads to an authorization URL
 * (withMcpClient throws McpAuthorizationRequired) instead of a plain failure.
 */
export function connectionOf(row: DbMcpServer, headers: Record<string, string>): McpServerConnection;
export function connectionOf(
  row: DbMcpServer,
  headers: Record<string, string>,
  endUserId: string | null,
  deps: McpToolDeps,
): McpServerConnection;
export function connectionOf(
  row: DbMcpServer,
  headers: Record<string, string>,
  endUserId: string | null = null,
  deps?: McpToolDeps,
): McpServerConnection {
  const conn: McpServerConnection = { endpoint: row.endpoint, transport: row.transport, headers };
  if (!deps) return conn;
  return {
    ...conn,
    auth: mcpOAuthProvider({ db: deps.db, secrets: deps.secrets, publicUrl: deps.publicUrl }, row, endUserId),
    protocol: protocolMemory(deps.db, row),
  };
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Marks a listing's or call's span as failed: `error.type` and a short status message. */
export function markError(span: Span, type: string, message: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: message.slice(0, 300) });
}
