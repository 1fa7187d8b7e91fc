import type { Db } from '../db/knex.js';

/** An agent another protocol may call: what its door needs to describe it. */
export interface ExposedAgent {
  id: string;
  name: string;
  description: string | null;
  /** The agent's answer schema (a JSON Schema), when it has one. */
  schema: Record<string, unknown> | null;
  /** What an MCP call without `message` sends; null: `message` is required. */
  mcpMessage: string | null;
}

/** The project and the agents it opens through a door; `project: false` when there is no such project. */
export interface ExposedAgents {
  project: boolean;
  agents: ExposedAgent[];
}

/** Knex only: the agents a project exposes through a door (`agents.expose`), by name. */
export class ExposedAgentsRepository {
  constructor(private readonly db: Db) {}

  /**
   * One statement: the project's existence and its agents with
   * `expose.<door>` set, ordered by name then id (a stable order: clients
   * cache and compare lists).
   */
  async list(projectId: string, door: 'mcp' | 'a2a'): Promise<ExposedAgents> {
    const rows: Array<{
      project_id: string;
      id: string | null;
      name: string | null;
      description: string | null;
      schema: Record<string, unknown> | null;
      mcp_message: string | null;
    }> = await this.db('projects as p')
      .leftJoin('agents as a', (j) =>
        j.on('a.project_id', 'p.id').andOn(this.db.raw(`(a.expose ->> ?)::boolean`, [door])),
      )
      .leftJoin('schemas as s', 's.id', 'a.schema_id')
      .where('p.id', projectId)
      .orderBy([{ column: 'a.name' }, { column: 'a.id' }])
      .select(
        'p.id as project_id',
        'a.id',
        'a.name',
        'a.description',
        's.schema',
        this.db.raw(`a.expose ->> 'mcp_message' as mcp_message`),
      );
    if (rows.length === 0) return { project: false, agents: [] };
    const agents = rows
      .filter((r) => r.id !== null)
      .map((r) => ({
        id: r.id!,
        name: r.name!,
        description: r.description,
        schema: r.schema,
        mcpMessage: r.mcp_message,
      }));
    return { project: true, agents };
  }
}
