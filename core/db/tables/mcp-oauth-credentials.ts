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

/** Whose OAuth credentials and flows a row holds: an MCP server's or a remote A2A agent's. */
export type OAuthOwnerColumn = 'server_id' | 'a2a_agent_id';

/** The OAuth credentials held for one MCP server (or A2A agent) and one end user ('' is the project's own). */
export type DbMcpOAuthCredentials = {
  id: string;
  /** Exactly one of server_id and a2a_agent_id is set. */
  server_id: string | null;
  a2a_agent_id: string | null;
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
export type DbMcpOAuthCredentialsInsert = Pick<DbMcpOAuthCredentials, 'end_user_id'> &
  Partial<Pick<DbMcpOAuthCredentials, OAuthOwnerColumn>> &
  Partial<Pick<DbMcpOAuthCredentials, 'client_info_enc' | 'tokens_enc' | 'scopes' | 'expires_at'>> & {
    discovery?: McpOAuthDiscovery | string | null;
  };
export type DbMcpOAuthCredentialsUpdate = Partial<
  Omit<DbMcpOAuthCredentialsInsert, OAuthOwnerColumn | 'end_user_id'>
>;

export type McpOAuthCredentialsTable = Knex.CompositeTableType<
  DbMcpOAuthCredentials,
  DbMcpOAuthCredentialsInsert,
  DbMcpOAuthCredentialsUpdate & { updated_at?: Timestamp }
>;
