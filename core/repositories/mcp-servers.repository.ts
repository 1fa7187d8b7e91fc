import type { Db } from '../db/knex.js';
import {
  McpServersTableName,
  type DbMcpServer,
  type DbMcpServerInsert,
  type DbMcpServerUpdate,
  type McpServerProtocol,
} from '../db/tables/index.js';
import type { Page } from './types.js';

export class McpServersRepository {
  constructor(private readonly db: Db) {}

  async insert(row: DbMcpServerInsert): Promise<DbMcpServer> {
    const [created] = await this.db(McpServersTableName).insert(row).returning('*');
    return created!;
  }

  async list(projectId: string, page: Page): Promise<DbMcpServer[]> {
    return this.db(McpServersTableName)
      .where({ project_id: projectId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset);
  }

  async findById(id: string): Promise<DbMcpServer | undefined> {
    return this.db(McpServersTableName).where({ id }).first();
  }

  async update(id: string, patch: DbMcpServerUpdate): Promise<DbMcpServer | undefined> {
    // Another endpoint or transport may speak another protocol revision: learn it again.
    const relearn = patch.endpoint !== undefined || patch.transport !== undefined ? { protocol: null } : {};
    const [row] = await this.db(McpServersTableName)
      .where({ id })
      .update({ ...patch, ...relearn, updated_at: this.db.fn.now() })
      .returning('*');
    return row;
  }

  /** Remembers the protocol revision a connection learnt (no updated_at: not a change anyone made). */
  async rememberProtocol(id: string, protocol: McpServerProtocol | null): Promise<void> {
    await this.db(McpServersTableName).where({ id }).update({ protocol });
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db(McpServersTableName).where({ id }).delete()) > 0;
  }

  /** Agents whose configuration lists this server. */
  async referrers(id: string): Promise<Array<{ id: string; name: string }>> {
    return this.db('agent_mcp_servers as am')
      .join('agents as a', 'a.id', 'am.agent_id')
      .where('am.mcp_server_id', id)
      .select<Array<{ id: string; name: string }>>('a.id', 'a.name')
      .orderBy('a.name');
  }
}
