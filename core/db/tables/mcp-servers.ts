import type { Knex } from 'knex';
import type { Timestamp } from './columns.js';

export const McpServersTableName = 'mcp_servers';

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
  created_at: Date;
  updated_at: Date;
};
export type DbMcpServerInsert = Pick<DbMcpServer, 'project_id' | 'name' | 'endpoint'> &
  Partial<Pick<DbMcpServer, 'transport' | 'headers_enc' | 'oauth_enc' | 'per_user_tokens'>>;
export type DbMcpServerUpdate = Partial<
  Pick<DbMcpServer, 'name' | 'endpoint' | 'transport' | 'headers_enc' | 'oauth_enc' | 'per_user_tokens'>
>;

export type McpServersTable = Knex.CompositeTableType<
  DbMcpServer,
  DbMcpServerInsert,
  DbMcpServerUpdate & { updated_at?: Timestamp }
>;
