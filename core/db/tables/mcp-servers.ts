import type { Knex } from 'knex';
import type { Timestamp } from './columns.js';

export const McpServersTableName = 'mcp_servers';

/** What a connection learnt of the server's protocol revision. */
export interface McpServerProtocol {
  /** 'modern': 2026-07-28 and later (`server/discover`); 'legacy': the 2025-era `initialize` handshake. */
  era: 'modern' | 'legacy';
  /** The revision negotiated, e.g. '2026-07-28' or '2025-11-25'. */
  version: string | null;
  /** A modern server's `server/discover` result, adopted by the next connection without a round trip. */
  discover?: Record<string, unknown>;
  /** When it was learnt (ISO 8601): a remembered verdict is trusted for a while only. */
  learnt_at: string;
}

export type DbMcpServer = {
  id: string;
  project_id: string;
  name: string;
  endpoint: string;
  transport: 'streamable_http' | 'sse';
  /** The headers sent to the server, encrypted with SECRETS_KEY. */
  headers_enc: string | null;
  /** The pre-registered OAuth client and its settings (McpOAuthConfig), encrypted JSON; null: none. */
  oauth_enc: string | null;
  /** Each end user authorizes on their own (tokens per end user) rather than the project once. */
  per_user_tokens: boolean;
  /** The protocol revision our client learnt the server speaks (core/mcp/protocol-revision.ts); null: not yet. */
  protocol: McpServerProtocol | null;
  created_at: Date;
  updated_at: Date;
};
export type DbMcpServerInsert = Pick<DbMcpServer, 'project_id' | 'name' | 'endpoint'> &
  Partial<Pick<DbMcpServer, 'transport' | 'headers_enc' | 'oauth_enc' | 'per_user_tokens'>>;
export type DbMcpServerUpdate = Partial<
  Pick<
    DbMcpServer,
    'name' | 'endpoint' | 'transport' | 'headers_enc' | 'oauth_enc' | 'per_user_tokens' | 'protocol'
  >
>;

export type McpServersTable = Knex.CompositeTableType<
  DbMcpServer,
  DbMcpServerInsert,
  DbMcpServerUpdate & { updated_at?: Timestamp }
>;
