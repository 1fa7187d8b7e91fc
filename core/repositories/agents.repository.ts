import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import {
  AgentMcpServersTableName,
  AgentsTableName,
  ProjectsTableName,
  PromptLabelsTableName,
  VirtualKeyGrantsTableName,
  VirtualKeysTableName,
  type DbAgent,
  type DbAgentWrite,
  type DbVirtualKey,
  type DbVirtualKeyGrant,
  type ProviderType,
  type PromptLabel,
} from '../db/tables/index.js';
import type { Page } from './types.js';
import type { McpEntry } from './types.js';

export interface AgentWithServers extends DbAgent {
  mcp_servers: McpEntry[];
}

type Conn = Db | Knex.Transaction;

/** Agents of a project matched as the Agent Protocol searches assistants. */
export interface AgentSearch {
  /** The agent's graph: the agent it was copied from, or itself. */
  graphId?: string;
  /** Contained in the agent's metadata. */
  metadata?: Record<string, unknown>;
  /** A substring of the name, whatever its case. */
  name?: string;
}

export const AGENT_SORTS = ['id', 'graph_id', 'created_at', 'updated_at', 'name'] as const;
export type AgentSort = { by: (typeof AGENT_SORTS)[number]; order: 'asc' | 'desc' };

/** A model as its agents' turns would call it: which provider serves it, if one can. */
export interface ModelServing {
  id: string;
  name: string;
  model_id: string;
  provider_type: ProviderType;
  /** Its own provider, or the only one of its type; null when it names none and there are none or several. */
  serving: { id: string; name: string } | null;
  /** How many providers of its type exist. */
  of_type: number;
}

/** A prompt's version by label, as a turn would render it. */
export interface LabelledTemplate {
  prompt_id: string;
  label: string;
  version: number;
  template: string;
}

type Serving = { serving_id: string | null; serving_name: string | null };

/** The project's virtual key, the one its agents' turns are metered on. */
export type ProjectKey = Pick<DbVirtualKey, 'id' | 'name' | 'expires_at' | 'deleted_at'> & {
  grants: Array<Pick<DbVirtualKeyGrant, 'provider_id' | 'model_names'>>;
};

/** An agent as a write sends it: jsonb as JSON text (node-pg would send an array as a PostgreSQL array). */
function storable<T extends Partial<DbAgentWrite>>(row: T) {
  const {
    non_idempotent_tools: tools,
    budget,
    expose,
    sub_agents: subAgents,
    a2a_agents: a2a,
    ...rest
  } = row;
  return {
    ...rest,
    ...(a2a !== undefined ? { a2a_agents: JSON.stringify(a2a) } : {}),
    ...(expose !== undefined ? { expose: JSON.stringify(expose) } : {}),
    ...(subAgents !== undefined ? { sub_agents: JSON.stringify(subAgents) } : {}),
    ...(tools !== undefined ? { non_idempotent_tools: JSON.stringify(tools) } : {}),
    ...(budget !== undefined ? { budget: budget === null ? null : JSON.stringify(budget) } : {}),
  };
}

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
    const [created] = await trx(AgentsTableName).insert(storable(row)).returning('*');
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
      .update({ ...storable(row), updated_at: trx.fn.now() })
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

  private searched(projectId: string, f: AgentSearch): Knex.QueryBuilder {
    const q = this.db(AgentsTableName).where({ project_id: projectId });
    if (f.graphId !== undefined) void q.whereRaw('coalesce(graph_id, id) = ?::uuid', [f.graphId]);
    if (f.metadata && Object.keys(f.metadata).length > 0)
      void q.whereRaw('metadata @> ?::jsonb', [JSON.stringify(f.metadata)]);
    if (f.name) void q.whereRaw('strpos(lower(name), lower(?)) > 0', [f.name]);
    return q;
  }

  /** The project's agents matching the search, in the order asked (then by id). */
  async search(projectId: string, f: AgentSearch, sort: AgentSort, page: Page): Promise<AgentWithServers[]> {
    const q = this.searched(projectId, f);
    // The graph is the agent it was copied from, or itself; `order` is one of two words.
    if (sort.by === 'graph_id')
      void q.orderByRaw(`coalesce(graph_id, id) ${sort.order === 'asc' ? 'asc' : 'desc'}`);
    else void q.orderBy(sort.by, sort.order);
    const rows = (await q.orderBy('id', sort.order).limit(page.limit).offset(page.offset)) as DbAgent[];
    return this.withServers(rows);
  }

  async count(projectId: string, f: AgentSearch): Promise<number> {
    const rows = await this.searched(projectId, f).count<Array<{ n: string | number }>>('* as n');
    const row = rows[0];
    return Number(row?.n ?? 0);
  }

  /** The agents that list this one among their sub-agents. */
  async subAgentReferrers(id: string, conn: Conn = this.db): Promise<Array<{ id: string; name: string }>> {
    return conn(AgentsTableName)
      .whereRaw('sub_agents @> ?::jsonb', [JSON.stringify([{ agent_id: id }])])
      .select('id', 'name')
      .orderBy('name');
  }

  async delete(id: string, conn: Conn = this.db): Promise<boolean> {
    return (await conn(AgentsTableName).where({ id }).delete()) > 0;
  }

  /** The project's virtual key with its grants; null when the project names none. */
  async projectKey(projectId: string): Promise<ProjectKey | null> {
    const key = await this.db({ p: ProjectsTableName })
      .join({ k: VirtualKeysTableName }, 'k.id', 'p.virtual_key_id')
      .where('p.id', projectId)
      .first<Omit<ProjectKey, 'grants'> | undefined>('k.id', 'k.name', 'k.expires_at', 'k.deleted_at');
    if (!key) return null;
    const grants = await this.db(VirtualKeyGrantsTableName)
      .where({ virtual_key_id: key.id })
      .select('provider_id', 'model_names');
    return { ...key, grants };
  }

  /** The models of the project among `ids`, with the provider that would serve each. */
  async modelsServing(projectId: string, ids: string[]): Promise<ModelServing[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.db.raw<{ rows: Array<Omit<ModelServing, 'serving'> & Serving> }>(
      `select m.id, m.name, m.model_id, m.provider_type, s.id as serving_id, s.name as serving_name,
              (select count(*)::int from providers t where t.provider_type = m.provider_type) as of_type
         from models m
         left join lateral (
           select p.id, p.name from providers p where p.id = m.provider_id
           union all
           select p.id, p.name from providers p
            where m.provider_id is null and p.provider_type = m.provider_type
              and (select count(*) from providers t where t.provider_type = m.provider_type) = 1
         ) s on true
        where m.project_id = ? and m.id = any(?::uuid[])`,
      [projectId, ids],
    );
    return rows.map(({ serving_id, serving_name, ...m }) => ({
      ...m,
      serving: serving_id ? { id: serving_id, name: serving_name! } : null,
    }));
  }

  /** The versions of the project's prompts that these labels point at. */
  async templatesByLabel(
    projectId: string,
    wanted: Array<{ promptId: string; label: string }>,
  ): Promise<LabelledTemplate[]> {
    if (wanted.length === 0) return [];
    const { rows } = await this.db.raw<{ rows: LabelledTemplate[] }>(
      `select l.prompt_id, l.label, v.version, v.template
         from prompt_labels l
         join prompt_versions v on v.id = l.version_id
         join prompts p on p.id = l.prompt_id
        where p.project_id = ? and (l.prompt_id, l.label) in (select * from unnest(?::uuid[], ?::text[]))`,
      [projectId, wanted.map((w) => w.promptId), wanted.map((w) => w.label)],
    );
    return rows;
  }

  /** Whether the prompt has a version carrying the label. */
  async promptHasLabel(conn: Conn, promptId: string, label: PromptLabel): Promise<boolean> {
    return (await conn(PromptLabelsTableName).where({ prompt_id: promptId, label }).first()) !== undefined;
  }
}
