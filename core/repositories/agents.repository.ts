import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import {
  AgentMcpServersTableName,
  AgentsTableName,
  PromptLabelsTableName,
  type DbAgent,
  type DbAgentWrite,
  type PromptLabel,
} from '../db/tables/index.js';
import type { Page } from './types.js';
import type { McpEntry } from './types.js';

export interface AgentWithServers extends DbAgent {
  mcp_servers: McpEntry[];
}

type Conn = Db | Knex.Transaction;

export class AgentsRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(fn);
  }

  private async withServers(rows: DbAgent[], conn: Conn = this.db): Promise<AgentWithServers[]> {
    if (rows.length === 0) return [];
    const entries = await conn(AgentMcpServersTableName)
      .whereIn(
        'agent_id',
        rows.map((r) => r.id),
      )
      .orderBy('position');
    return rows.map((r) => ({
      ...r,
      mcp_servers: entries
        .filter((e) => e.agent_id === r.id)
        .map((e) => ({
          mcp_server_id: e.mcp_server_id,
          tool_filters: e.tool_filters,
          tools_requiring_approval: e.tools_requiring_approval,
        })),
    }));
  }

  async insert(trx: Knex.Transaction, row: DbAgentWrite, servers: McpEntry[]): Promise<AgentWithServers> {
    const [created] = await trx(AgentsTableName).insert(row).returning('*');
    await this.replaceServers(trx, created!.id, servers);
    return (await this.withServers([created!], trx))[0]!;
  }

  async update(
    trx: Knex.Transaction,
    id: string,
    row: Partial<DbAgentWrite>,
    servers?: McpEntry[],
  ): Promise<AgentWithServers> {
    const [updated] = await trx(AgentsTableName)
      .where({ id })
      .update({ ...row, updated_at: trx.fn.now() })
      .returning('*');
    if (servers) await this.replaceServers(trx, id, servers);
    return (await this.withServers([updated!], trx))[0]!;
  }

  private async replaceServers(trx: Knex.Transaction, agentId: string, servers: McpEntry[]): Promise<void> {
    await trx(AgentMcpServersTableName).where({ agent_id: agentId }).delete();
    if (servers.length === 0) return;
    await trx(AgentMcpServersTableName).insert(
      servers.map((s, position) => ({
        agent_id: agentId,
        mcp_server_id: s.mcp_server_id,
        tool_filters: JSON.stringify(s.tool_filters),
        tools_requiring_approval: JSON.stringify(s.tools_requiring_approval),
        position,
      })),
    );
  }

  async list(projectId: string, page: Page): Promise<AgentWithServers[]> {
    const rows = await this.db(AgentsTableName)
      .where({ project_id: projectId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset);
    return this.withServers(rows);
  }

  async findById(id: string, conn: Conn = this.db, forUpdate = false): Promise<AgentWithServers | undefined> {
    const q = conn(AgentsTableName).where({ id });
    if (forUpdate) void q.forUpdate();
    const row = await q.first();
    return row ? (await this.withServers([row], conn))[0] : undefined;
  }

  async findByName(name: string, projectId?: string): Promise<AgentWithServers[]> {
    const rows = await this.db(AgentsTableName)
      .where(projectId ? { name, project_id: projectId } : { name })
      .limit(2);
    return this.withServers(rows);
  }

  async delete(id: string, conn: Conn = this.db): Promise<boolean> {
    return (await conn(AgentsTableName).where({ id }).delete()) > 0;
  }

  /** Whether the prompt has a version carrying the label. */
  async promptHasLabel(conn: Conn, promptId: string, label: PromptLabel): Promise<boolean> {
    return (await conn(PromptLabelsTableName).where({ prompt_id: promptId, label }).first()) !== undefined;
  }
}
