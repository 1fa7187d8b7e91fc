import type { DbMcpOAuthFlow, DbMcpServer } from '../../db/tables/index.js';
import type { McpOAuthConfig } from './config.js';
import { McpOAuthProvider, type McpOAuthDeps } from './provider.js';

export { grantOf, type McpOAuthConfig } from './config.js';
export { hashState, MAX_AUTHORIZATION_ATTEMPTS, McpOAuthProvider, type McpOAuthDeps } from './provider.js';
export * from './urls.js';

/** A remote's OAuth settings (an MCP server's, an A2A agent's), decrypted (null: none given). */
export function oauthConfigOf(
  deps: Pick<McpOAuthDeps, 'secrets'>,
  row: { oauth_enc: string | null },
): McpOAuthConfig | null {
  return row.oauth_enc ? deps.secrets.decryptJson<McpOAuthConfig>(row.oauth_enc) : null;
}

/**
 * The OAuth provider for `row` and an end user (null or '': the project's
 * own credentials; an end user's only when the server keeps tokens per user).
 */
export function mcpOAuthProvider(
  deps: McpOAuthDeps,
  row: DbMcpServer,
  endUserId?: string | null,
  flow?: DbMcpOAuthFlow,
): McpOAuthProvider {
  const owner = row.per_user_tokens ? (endUserId ?? '') : '';
  return new McpOAuthProvider(
    deps,
    { id: row.id, endpoint: row.endpoint },
    owner,
    oauthConfigOf(deps, row),
    flow,
  );
}
