import type { Knex } from 'knex';
import type { Timestamp } from './columns.js';

export const McpOAuthCredentialsTableName = 'mcp_oauth_credentials';

/** What discovery found (RFC 9728 and RFC 8414 documents): public, no secrets. */
export type McpOAuthDiscovery = {
  authorizationServerUrl: string;
  resourceMetadataUrl?: string;
  resourceMetadata?: Record<string, unknown>;
  authorizationServerMetadata?: Record<string, unknown>;
};

/** The OAuth credentials held for one MCP server and one end user ('' is the project's own). */
export type DbMcpOAuthCredentials = {
  id: string;
  server_id: string;
  end_user_id: string;
  /** The client's registration (client_id, client_secret…), encrypted JSON. */
  client_info_enc: string | null;
  /** Access and refresh tokens, encrypted JSON. */
  tokens_enc: string | null;
  discovery: McpOAuthDiscovery | null;
  /** The scopes granted, space separated. */
  scopes: string | null;
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
};
export type DbMcpOAuthCredentialsInsert = Pick<DbMcpOAuthCredentials, 'server_id' | 'end_user_id'> &
  Partial<Pick<DbMcpOAuthCredentials, 'client_info_enc' | 'tokens_enc' | 'scopes' | 'expires_at'>> & {
    discovery?: McpOAuthDiscovery | string | null;
  };
export type DbMcpOAuthCredentialsUpdate = Partial<
  Omit<DbMcpOAuthCredentialsInsert, 'server_id' | 'end_user_id'>
>;

export type McpOAuthCredentialsTable = Knex.CompositeTableType<
  DbMcpOAuthCredentials,
  DbMcpOAuthCredentialsInsert,
  DbMcpOAuthCredentialsUpdate & { updated_at?: Timestamp }
>;
