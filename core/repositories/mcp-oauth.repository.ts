import type { Db } from '../db/knex.js';
import {
  McpOAuthCredentialsTableName,
  McpOAuthFlowsTableName,
  type DbMcpOAuthCredentials,
  type DbMcpOAuthCredentialsUpdate,
  type DbMcpOAuthFlow,
  type DbMcpOAuthFlowInsert,
  type OAuthOwnerColumn,
} from '../db/tables/index.js';

/** How long a person has to complete an authorization once sent to the authorization server. */
export const FLOW_TTL_MINUTES = 10;

/**
 * The credentials and authorization flows of MCP servers' OAuth (or, with
 * `a2a_agent_id`, remote A2A agents'); end user '' is the project's own.
 */
export class McpOAuthRepository {
  constructor(
    private readonly db: Db,
    private readonly owner: OAuthOwnerColumn = 'server_id',
  ) {}

  private of(ownerId: string, endUserId?: string): Record<string, string> {
    return endUserId === undefined
      ? { [this.owner]: ownerId }
      : { [this.owner]: ownerId, end_user_id: endUserId };
  }

  async credentials(serverId: string, endUserId: string): Promise<DbMcpOAuthCredentials | undefined> {
    return this.db(McpOAuthCredentialsTableName).where(this.of(serverId, endUserId)).first();
  }

  /** Whether the server ever asked anyone for authorization (credentials or discovery stored for someone). */
  async anyCredentials(serverId: string): Promise<boolean> {
    return (await this.db(McpOAuthCredentialsTableName).where(this.of(serverId)).first('id')) !== undefined;
  }

  /** Creates the row or changes the given columns of it (one statement: two writers never collide). */
  async saveCredentials(
    serverId: string,
    endUserId: string,
    patch: DbMcpOAuthCredentialsUpdate,
  ): Promise<void> {
    const row = {
      ...patch,
      ...(patch.discovery !== undefined && patch.discovery !== null
        ? { discovery: JSON.stringify(patch.discovery) }
        : {}),
    };
    await this.db(McpOAuthCredentialsTableName)
      .insert({ ...this.of(serverId, endUserId), end_user_id: endUserId, ...row })
      .onConflict([this.owner, 'end_user_id'])
      .merge({ ...row, updated_at: this.db.fn.now() });
  }

  async deleteCredentials(serverId: string, endUserId: string): Promise<boolean> {
    const deleted = await this.db(McpOAuthCredentialsTableName).where(this.of(serverId, endUserId)).delete();
    await this.db(McpOAuthFlowsTableName).where(this.of(serverId, endUserId)).delete();
    return deleted > 0;
  }

  /** Records a flow; expired flows of the same server and end user are dropped on the way. */
  async insertFlow(
    ownerId: string,
    flow: Omit<DbMcpOAuthFlowInsert, 'expires_at' | OAuthOwnerColumn>,
  ): Promise<void> {
    await this.db(McpOAuthFlowsTableName)
      .where(this.of(ownerId, flow.end_user_id))
      .whereNull('used_at')
      .where('expires_at', '<', this.db.fn.now())
      .delete();
    await this.db(McpOAuthFlowsTableName).insert({
      ...flow,
      [this.owner]: ownerId,
      expires_at: this.db.raw(`now() + interval '${FLOW_TTL_MINUTES} minutes'`),
    });
  }

  async flow(stateHash: string): Promise<DbMcpOAuthFlow | undefined> {
    return this.db(McpOAuthFlowsTableName).where({ state_hash: stateHash }).first();
  }

  /**
   * Marks the flow used if it is still open (not used, not expired) and
   * returns it; undefined otherwise. One statement, so two callbacks with the
   * same state cannot both win.
   */
  async claimFlow(stateHash: string): Promise<DbMcpOAuthFlow | undefined> {
    const [row] = await this.db(McpOAuthFlowsTableName)
      .where({ state_hash: stateHash })
      .whereNull('used_at')
      .where('expires_at', '>', this.db.fn.now())
      .update({ used_at: this.db.fn.now() })
      .returning('*');
    return row;
  }

  /** Completed authorizations that asked for `scope` since the server last accepted us. */
  async completedAttempts(serverId: string, endUserId: string, scope: string | null): Promise<number> {
    const query = this.db(McpOAuthFlowsTableName).where(this.of(serverId, endUserId)).whereNotNull('used_at');
    if (scope === null) void query.whereNull('scope');
    else void query.where({ scope });
    const [row] = await query.count<Array<{ count: string }>>({ count: '*' });
    return Number(row?.count ?? 0);
  }

  /** The server accepted us: the authorizations that led here are history, the next sequence starts at zero. */
  async forgetCompletedFlows(serverId: string, endUserId: string): Promise<void> {
    await this.db(McpOAuthFlowsTableName)
      .where(this.of(serverId, endUserId))
      .whereNotNull('used_at')
      .delete();
  }
}
