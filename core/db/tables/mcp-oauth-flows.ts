import type { Knex } from 'knex';
import type { Timestamp } from './columns.js';

export const McpOAuthFlowsTableName = 'mcp_oauth_flows';

/** An authorization under way: a person was sent to the authorization server with `state`. */
export type DbMcpOAuthFlow = {
  /** SHA-256 (hex) of the `state` sent: the state itself is never stored. */
  state_hash: string;
  /** Exactly one of server_id and a2a_agent_id is set. */
  server_id: string | null;
  a2a_agent_id: string | null;
  end_user_id: string;
  /** The PKCE code verifier, encrypted. */
  code_verifier_enc: string;
  redirect_uri: string;
  /** The scope asked for, as sent. */
  scope: string | null;
  created_at: Date;
  expires_at: Date;
  /** Set once by the callback: a state is good for one exchange. */
  used_at: Date | null;
};
export type DbMcpOAuthFlowInsert = Pick<
  DbMcpOAuthFlow,
  'state_hash' | 'end_user_id' | 'code_verifier_enc' | 'redirect_uri' | 'scope'
> &
  Partial<Pick<DbMcpOAuthFlow, 'server_id' | 'a2a_agent_id'>> & { expires_at: Timestamp };
export type DbMcpOAuthFlowUpdate = { used_at?: Timestamp };

export type McpOAuthFlowsTable = Knex.CompositeTableType<
  DbMcpOAuthFlow,
  DbMcpOAuthFlowInsert,
  DbMcpOAuthFlowUpdate
>;
