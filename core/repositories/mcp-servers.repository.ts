import type { Db } from '../db/knex.js';
import type { Page } from './types.js';

export const McpServersTableName = 'mcp_servers';
export interface DbMcpServer {
  id: string;
  project_id: string;
  name: string;
  endpoint: string;
  transport: 'streamable_http' | 'sse';
  headers_enc: string | null;
  created_at: Date;
  updated_at: Date;
}
export type DbMcpServerInsert = Pick<
  DbMcpServer,
  'project_id' | 'name' | 'endpoint' | 'transport' | 'headers_enc'
>;
export type DbMcpServerUpdate = Partial<Pick<DbMcpServer, 'name' | 'endpoint' | 'transport' | 'headers_enc'>>;

export class McpServersRepository {
  constructor(private readonly db: Db) {}

  async insert(row: DbMcpServerInsert): Promise<DbMcpServer> {
    const [created] = (await this.db(McpServersTableName).insert(row).returning('*')) as DbMcpServer[];
    return created!;
  }

  async list(projectId: string, page: Page): Promise<DbMcpServer[]> {
    return (await this.db(McpServersTableName)
      .where({ project_id: projectId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset)) as DbMcpServer[];
  }

  async findById(id: string): Promise<DbMcpServer | undefined> {
    return (await this.db(McpServersTableName).where({ id }).first()) as DbMcpServer | undefined;
  }

  async update(id: string, patch: DbMcpServerUpdate): Promise<DbMcpServer | undefined> {
    const [row] = (await this.db(McpServersTableName)
      .where({ id })
      .update({ ...patch, updated_at: this.db.fn.now() })
      .returning('*')) as DbMcpServer[];
    return row;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db(McpServersTableName).where({ id }).delete()) > 0;
  }

  /** Agents whose configuration lists this server. */
  async referrers(id: string): Promise<Array<{ id: string; name: string }>> {
    return (await this.db('agent_mcp_servers as am')
      .join('agents as a', 'a.id', 'am.agent_id')
      .where('am.mcp_server_id', id)
      .select('a.id', 'a.name')
      .orderBy('a.name')) as Array<{ id: string; name: string }>;
  }
}
