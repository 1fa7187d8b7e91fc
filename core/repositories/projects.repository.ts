import type { Db } from '../db/knex.js';
import {
  ConversationsTableName,
  ModelsTableName,
  ProjectsTableName,
  RunsTableName,
  SpansTableName,
  VirtualKeysTableName,
  type DbModel,
  type DbProject,
  type DbProjectInsert,
  type DbProjectUpdate,
} from '../db/tables/index.js';
import type { Page } from './types.js';
import type { Referrer } from './types.js';

/** Tables whose rows belong to a project (RESTRICT foreign keys), with the column that names a row. */
const PROJECT_CONTENTS = [
  { table: 'models', type: 'model', label: 'name' },
  { table: 'prompts', type: 'prompt', label: 'name' },
  { table: 'schemas', type: 'schema', label: 'name' },
  { table: 'mcp_servers', type: 'mcp_server', label: 'name' },
  { table: 'agents', type: 'agent', label: 'name' },
  { table: 'conversations', type: 'conversation', label: null },
  { table: 'datasets', type: 'dataset', label: 'name' },
] as const;
/** Enough to tell the caller what is left without turning the error into a dump. */
const CONTENTS_PER_TABLE = 20;

export class ProjectsRepository {
  constructor(private readonly db: Db) {}

  async insert(row: DbProjectInsert): Promise<DbProject> {
    const [created] = await this.db(ProjectsTableName).insert(row).returning('*');
    return created!;
  }

  /** `only`: just these projects (a member's, in users mode); undefined: all. */
  async list(page: Page, only?: string[]): Promise<DbProject[]> {
    const query = this.db(ProjectsTableName);
    if (only) query.whereIn('id', only);
    return query
      .select('*')
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset);
  }

  async exists(id: string): Promise<boolean> {
    return (await this.db(ProjectsTableName).where({ id }).first('id')) !== undefined;
  }

  async findById(id: string): Promise<DbProject | undefined> {
    return this.db(ProjectsTableName).where({ id }).first();
  }

  async update(id: string, patch: DbProjectUpdate): Promise<DbProject | undefined> {
    const [updated] = await this.db(ProjectsTableName)
      .where({ id })
      .update({ ...patch, updated_at: this.db.fn.now() })
      .returning('*');
    return updated;
  }

  /** The project and provider type of a model a project's store would embed with. */
  async modelForStore(modelId: string): Promise<Pick<DbModel, 'project_id' | 'provider_type'> | undefined> {
    return this.db(ModelsTableName).where({ id: modelId }).first('project_id', 'provider_type');
  }

  async virtualKeyExists(id: string): Promise<boolean> {
    // A deleted key (deleted_at set) names no existing key.
    return (
      (await this.db(VirtualKeysTableName).where({ id }).whereNull('deleted_at').first('id')) !== undefined
    );
  }

  /** What still belongs to the project, newest first per table (at most CONTENTS_PER_TABLE of each). */
  async contents(id: string): Promise<Referrer[]> {
    const found = await Promise.all(
      PROJECT_CONTENTS.map(async ({ table, type, label }) => {
        const rows = await this.db(table)
          .where({ project_id: id })
          .orderBy('created_at', 'desc')
          .limit(CONTENTS_PER_TABLE)
          .select<Array<{ id: string; name?: string }>>(label ? ['id', label] : ['id']);
        return rows.map((r): Referrer =>
          r.name === undefined ? { type, id: r.id } : { type, id: r.id, name: r.name },
        );
      }),
    );
    return found.flat();
  }

  /**
   * The project and whatever is recorded of it in spans, in one transaction:
   * every trace holding a span that names the project (recorded prompts,
   * completions and tool content among them). Its conversations' traces went
   * with them; this takes what remains (a turn's spans exported after its
   * conversation was deleted, requests naming the project).
   */
  async delete(id: string): Promise<boolean> {
    return this.db.transaction(async (trx) => {
      const deleted = (await trx(ProjectsTableName).where({ id }).delete()) > 0;
      if (!deleted) return false;
      const traces = trx(SpansTableName).where({ project_id: id }).distinct('trace_id');
      await trx(SpansTableName).whereIn('trace_id', traces).delete();
      return true;
    });
  }

  /**
   * The turn a run is (its project, agent and conversation) and whether its
   * project records content: what the worker's spans of that turn carry.
   */
  async turnOfRun(
    runId: string,
  ): Promise<
    | { project_id: string; agent_id: string | null; conversation_id: string; record_content: boolean }
    | undefined
  > {
    return this.db(RunsTableName)
      .join(ConversationsTableName, `${ConversationsTableName}.pk`, `${RunsTableName}.conversation_pk`)
      .join(ProjectsTableName, `${ProjectsTableName}.id`, `${RunsTableName}.project_id`)
      .where(`${RunsTableName}.id`, runId)
      .first(
        `${RunsTableName}.project_id`,
        `${RunsTableName}.agent_id`,
        `${ConversationsTableName}.id as conversation_id`,
        `${ProjectsTableName}.record_content`,
      );
  }
}
