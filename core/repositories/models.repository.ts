import type { Db } from '../db/knex.js';
import {
  AgentsTableName,
  ModelsTableName,
  ProvidersTableName,
  type DbModel,
  type DbModelInsert,
  type DbModelUpdate,
  type DbProvider,
  type ProviderType,
} from '../db/tables/index.js';
import type { Page } from './types.js';
import type { Referrer } from './types.js';

const REFERRERS_LIMIT = 50;

export class ModelsRepository {
  constructor(private readonly db: Db) {}

  async insert(row: DbModelInsert): Promise<DbModel> {
    const [created] = await this.db(ModelsTableName).insert(row).returning('*');
    return created!;
  }

  async list(projectId: string, page: Page): Promise<DbModel[]> {
    return this.db(ModelsTableName)
      .where({ project_id: projectId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset);
  }

  async findById(id: string): Promise<DbModel | undefined> {
    return this.db(ModelsTableName).where({ id }).first();
  }

  async findProvider(id: string): Promise<Pick<DbProvider, 'id' | 'provider_type'> | undefined> {
    return this.db(ProvidersTableName).where({ id }).first('id', 'provider_type');
  }

  /**
   * The providers of a type, oldest first, at most `limit` of them, and how
   * many there are: who may serve a model that names no provider.
   */
  async providersOfType(
    type: ProviderType,
    limit: number,
  ): Promise<{ total: number; first: Array<Pick<DbProvider, 'id' | 'name'>> }> {
    const rows = await this.db(ProvidersTableName)
      .where({ provider_type: type })
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])
      .limit(limit)
      .select<Array<Pick<DbProvider, 'id' | 'name'> & { total: string }>>(
        'id',
        'name',
        this.db.raw('count(*) over () as total'),
      );
    return { total: Number(rows[0]?.total ?? 0), first: rows.map(({ id, name }) => ({ id, name })) };
  }

  /**
   * The provider that serves a model: the one it names, else the only
   * provider of its type (undefined while there are none, or several).
   */
  async servingProviderId(
    model: Pick<DbModel, 'provider_id' | 'provider_type'>,
  ): Promise<string | undefined> {
    if (model.provider_id) return model.provider_id;
    const { total, first } = await this.providersOfType(model.provider_type, 1);
    return total === 1 ? first[0]!.id : undefined;
  }

  async update(id: string, patch: DbModelUpdate): Promise<DbModel | undefined> {
    const [updated] = await this.db(ModelsTableName)
      .where({ id })
      .update({ ...patch, updated_at: this.db.fn.now() })
      .returning('*');
    return updated;
  }

  /** Agents that call the model, as their model or as their summarizer's. */
  async referrers(id: string): Promise<Referrer[]> {
    const rows = await this.db(AgentsTableName)
      .where({ model_id: id })
      .orWhere({ llm_summarizer_model_id: id })
      .orderBy('created_at', 'desc')
      .limit(REFERRERS_LIMIT)
      .select('id', 'name');
    return rows.map((a) => ({ type: 'agent', id: a.id, name: a.name }));
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db(ModelsTableName).where({ id }).delete()) > 0;
  }
}
