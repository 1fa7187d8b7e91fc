import type { Db } from '../db/knex.js';
import {
  ProjectsTableName,
  ProvidersTableName,
  VirtualKeyGrantsTableName,
  VirtualKeysTableName,
  type DbVirtualKey,
  type DbVirtualKeyGrant,
  type DbVirtualKeyWrite,
} from '../db/tables/index.js';
import type { Page } from './types.js';
import type { Grant } from './types.js';
import type { Referrer } from './types.js';

const REFERRERS_LIMIT = 50;

export type VirtualKeyWithGrants = DbVirtualKey & { grants: DbVirtualKeyGrant[] };

/**
 * Virtual keys and their grants. Multi-statement writes take the caller's
 * transaction. A deleted key keeps its row (`deleted_at` set) so its usage
 * history stays; every read and write here sees live keys only, except
 * `existsIncludingDeleted`.
 */
export class VirtualKeysRepository {
  constructor(private readonly db: Db) {}

  private live(q: Db = this.db) {
    return q(VirtualKeysTableName).whereNull('deleted_at');
  }

  async insert(row: Omit<DbVirtualKeyWrite, 'updated_at'>, q: Db): Promise<DbVirtualKey> {
    const [created] = await q(VirtualKeysTableName).insert(row).returning('*');
    return created!;
  }

  async update(id: string, patch: Partial<DbVirtualKeyWrite>, q: Db): Promise<DbVirtualKey | undefined> {
    const [updated] = await this.live(q)
      .where({ id })
      .update({ ...patch, updated_at: q.fn.now() })
      .returning('*');
    return updated;
  }

  /** Replaces every grant of the key, keeping the order given. */
  async replaceGrants(virtualKeyId: string, grants: Grant[], q: Db): Promise<void> {
    await q(VirtualKeyGrantsTableName).where({ virtual_key_id: virtualKeyId }).delete();
    if (grants.length === 0) return;
    await q(VirtualKeyGrantsTableName).insert(
      grants.map((g, position) => ({
        virtual_key_id: virtualKeyId,
        provider_id: g.provider_id,
        model_names: JSON.stringify(g.model_names),
        position,
      })),
    );
  }

  /**
   * Which of these provider ids / names exist. The rows are share-locked, so a
   * concurrent provider delete waits until this transaction has written its grants.
   */
  async lockProviders(ids: string[], names: string[], q: Db): Promise<Array<{ id: string; name: string }>> {
    if (ids.length === 0 && names.length === 0) return [];
    return q(ProvidersTableName).whereIn('id', ids).orWhereIn('name', names).forShare().select('id', 'name');
  }

  private async withGrants(rows: DbVirtualKey[], q: Db = this.db): Promise<VirtualKeyWithGrants[]> {
    if (rows.length === 0) return [];
    const grants = await q(VirtualKeyGrantsTableName)
      .whereIn(
        'virtual_key_id',
        rows.map((r) => r.id),
      )
      .orderBy('position');
    return rows.map((r) => ({ ...r, grants: grants.filter((g) => g.virtual_key_id === r.id) }));
  }

  async findById(id: string, q: Db = this.db): Promise<VirtualKeyWithGrants | undefined> {
    const row = await this.live(q).where({ id }).first();
    return row ? (await this.withGrants([row], q))[0] : undefined;
  }

  /** The live key without its grants (see `grantedModels`). */
  async findLive(id: string): Promise<DbVirtualKey | undefined> {
    return this.live().where({ id }).first();
  }

  /** The model names the key grants of this provider; undefined when it grants none of it. */
  async grantedModels(virtualKeyId: string, providerId: string): Promise<string[] | undefined> {
    const grant = await this.db(VirtualKeyGrantsTableName)
      .where({ virtual_key_id: virtualKeyId, provider_id: providerId })
      .first('model_names');
    return grant?.model_names;
  }

  /** A deleted key's usage stays readable, so the usage endpoint asks about deleted keys too. */
  async existsIncludingDeleted(id: string): Promise<boolean> {
    return (await this.db(VirtualKeysTableName).where({ id }).first('id')) !== undefined;
  }

  /** The key, deleted or not (its usage stays readable), without its grants. */
  async findIncludingDeleted(id: string): Promise<DbVirtualKey | undefined> {
    return this.db(VirtualKeysTableName).where({ id }).first();
  }

  /** The live key with this secret hash: a deleted key's secret is refused like any unknown one. */
  async findByHash(hash: Buffer): Promise<VirtualKeyWithGrants | undefined> {
    const row = await this.live().where({ key_hash: hash }).first();
    return row ? (await this.withGrants([row]))[0] : undefined;
  }

  async list(page: Page): Promise<VirtualKeyWithGrants[]> {
    const rows = await this.live()
      .select('*')
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset);
    return this.withGrants(rows);
  }

  /** Projects metered by this key. */
  async referrers(id: string, q: Db): Promise<Referrer[]> {
    const rows = await q(ProjectsTableName)
      .where({ virtual_key_id: id })
      .orderBy('created_at', 'desc')
      .limit(REFERRERS_LIMIT)
      .select('id', 'name');
    return rows.map((p) => ({ type: 'project', id: p.id, name: p.name }));
  }

  async lockById(id: string, q: Db): Promise<DbVirtualKey | undefined> {
    return this.live(q).where({ id }).forUpdate().first();
  }

  /**
   * Soft delete: the row stays (its usage rows reference it) with `deleted_at`
   * set. Its grants and fallbacks go: a revoked key must not keep a provider
   * from being deleted, and the usage rows name the provider and model of
   * every call anyway.
   */
  async softDelete(id: string, q: Db): Promise<boolean> {
    const now = q.fn.now();
    const deleted = await this.live(q)
      .where({ id })
      .update({ deleted_at: now, updated_at: now, fallbacks: '[]' });
    if (deleted === 0) return false;
    await q(VirtualKeyGrantsTableName).where({ virtual_key_id: id }).delete();
    return true;
  }
}
