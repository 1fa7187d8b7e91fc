/**
 * An MCP server's own OAuth settings (all optional): a client registered
 * beforehand at its authorization server, the scopes to ask for, and the
 * grant. Without them the client registers itself (Client ID Metadata
 * Document, else dynamic registration) and asks for what the server says.
 */
export interface McpOAuthConfig {
  client_id?: string;
  client_secret?: string;
  scopes?: string[];
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post' | 'none' | 'private_key_jwt';
  grant?: 'authorization_code' | 'client_credentials';
}

/** The grant a server's settings choose (authorization_code unless said otherwise). */
export function grantOf(
  config: McpOAuthConfig | null | undefined,
): 'authorization_code' | 'client_credentials' {
  return config?.grant ?? 'authorization_code';
}
