import type { Db } from '../db/knex.js';
import {
  ModelsTableName,
  ProvidersTableName,
  VirtualKeyGrantsTableName,
  VirtualKeysTableName,
  type DbProvider,
  type DbProviderInsert,
  type DbProviderUpdate,
  type ProviderType,
} from '../db/tables/index.js';
import type { Page } from './types.js';
import type { Referrer } from './types.js';

/** Enough referrers to act on, without turning an error body into a dump. */
const REFERRERS_LIMIT = 50;

/** Models live in projects; naming the project tells the caller where to look. */
export type ProviderReferrer = Referrer & { project_id?: string };

/** `<provider name>/…` entries of a key's fallbacks list refer to the provider by name. */
const FALLBACK_USES_NAME =
  "exists (select 1 from jsonb_array_elements_text(virtual_keys.fallbacks) f where split_part(f, '/', 1) = ?)";

export class ProvidersRepository {
  constructor(private readonly db: Db) {}

  async insert(row: DbProviderInsert): Promise<DbProvider> {
    const [created] = await this.db(ProvidersTableName).insert(row).returning('*');
    return created!;
  }

  async list(page: Page): Promise<DbProvider[]> {
    return this.db(ProvidersTableName)
      .select('*')
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset);
  }

  /** Providers by id or by name, in one indexed query (a key's grants and the providers its fallbacks name). */
  async findByIdsOrNames(ids: string[], names: string[]): Promise<DbProvider[]> {
    if (ids.length === 0 && names.length === 0) return [];
    return this.db(ProvidersTableName).whereIn('id', ids).orWhereIn('name', names);
  }

  async findById(id: string, q: Db = this.db): Promise<DbProvider | undefined> {
    return q(ProvidersTableName).where({ id }).first();
  }

  /** Locks the row until the transaction ends, so key writes that check it wait for a delete's outcome. */
  async lockById(id: string, q: Db): Promise<DbProvider | undefined> {
    return q(ProvidersTableName).where({ id }).forUpdate().first();
  }

  /** Which of these names exist (fallback entries name providers). */
  async existingNames(names: string[]): Promise<Set<string>> {
    if (names.length === 0) return new Set();
    const rows = await this.db(ProvidersTableName).whereIn('name', names).select('name');
    return new Set(rows.map((r) => r.name));
  }

  async update(id: string, patch: DbProviderUpdate, q: Db = this.db): Promise<DbProvider | undefined> {
    const [updated] = await q(ProvidersTableName)
      .where({ id })
      .update({ ...patch, updated_at: q.fn.now() })
      .returning('*');
    return updated;
  }

  /** Rewrites `<old>/model` fallback entries to `<new>/model`, so a rename never leaves them dangling. */
  async renameInFallbacks(oldName: string, newName: string, q: Db): Promise<void> {
    await q(VirtualKeysTableName)
      .whereRaw(FALLBACK_USES_NAME, [oldName])
      .update({
        fallbacks: q.raw(
          `(select coalesce(jsonb_agg(case when split_part(f, '/', 1) = ? then ? || substr(f, length(?) + 1) else f end order by n), '[]'::jsonb)
            from jsonb_array_elements_text(virtual_keys.fallbacks) with ordinality as e(f, n))`,
          [oldName, newName, oldName],
        ),
      });
  }

  /** Models whose provider type no longer matches a provider that changes its type. */
  async modelsOfOtherType(id: string, providerType: ProviderType): Promise<ProviderReferrer[]> {
    const rows = await this.db(ModelsTableName)
      .where({ provider_id: id })
      .whereNot({ provider_type: providerType })
      .orderBy('created_at', 'desc')
      .limit(REFERRERS_LIMIT)
      .select('id', 'name', 'project_id');
    return rows.map((r) => ({ type: 'model', id: r.id, name: r.name, project_id: r.project_id }));
  }

  /** Virtual keys granting it or falling back to it, and models pinned to it. */
  async referrers(provider: DbProvider, q: Db = this.db): Promise<ProviderReferrer[]> {
    const [keys, models] = await Promise.all([
      q(VirtualKeysTableName)
        .where((w) =>
          w
            .whereIn(
              'id',
              q(VirtualKeyGrantsTableName).where({ provider_id: provider.id }).select('virtual_key_id'),
            )
            .orWhereRaw(FALLBACK_USES_NAME, [provider.name]),
        )
        .orderBy('created_at', 'desc')
        .limit(REFERRERS_LIMIT)
        .select('id', 'name'),
      q(ModelsTableName)
        .where({ provider_id: provider.id })
        .orderBy('created_at', 'desc')
        .limit(REFERRERS_LIMIT)
        .select('id', 'name', 'project_id'),
    ]);
    return [
      ...keys.map((k): ProviderReferrer => ({ type: 'virtual_key', id: k.id, name: k.name })),
      ...models.map((m): ProviderReferrer => ({
        type: 'model',
        id: m.id,
        name: m.name,
        project_id: m.project_id,
      })),
    ];
  }

  async delete(id: string, q: Db = this.db): Promise<boolean> {
    return (await q(ProvidersTableName).where({ id }).delete()) > 0;
  }
}
