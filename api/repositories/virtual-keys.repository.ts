import type { Db } from '../db/knex.js';
import { ProjectsTableName } from '../db/tables.js';
import {
  ProvidersTableName,
  VirtualKeyGrantsTableName,
  VirtualKeysTableName,
  type DbVirtualKey,
  type DbVirtualKeyGrant,
  type DbVirtualKeyWrite,
} from '../db/llm-config.tables.js';
import type { Page } from '../schemas/common.schemas.js';
import type { Grant } from '../schemas/virtual-keys.schemas.js';
import type { Referrer } from '../services/project-scope.js';

const REFERRERS_LIMIT = 50;

export type VirtualKeyWithGrants = DbVirtualKey & { grants: DbVirtualKeyGrant[] };

/** Virtual keys and their grants. Multi-statement writes take the caller's transaction. */
export class VirtualKeysRepository {
  constructor(private readonly db: Db) {}

  async insert(row: Omit<DbVirtualKeyWrite, 'updated_at'>, q: Db): Promise<DbVirtualKey> {
    const [created] = await q(VirtualKeysTableName).insert(row).returning('*');
    return created!;
  }

  async update(id: string, patch: Partial<DbVirtualKeyWrite>, q: Db): Promise<DbVirtualKey | undefined> {
    const [updated] = await q(VirtualKeysTableName)
      .where({ id })
      .update({ ...patch, updated_at: q.fn.now() as unknown as Date })
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
    const row = await q(VirtualKeysTableName).where({ id }).first();
    return row ? (await this.withGrants([row], q))[0] : undefined;
  }

  async findByHash(hash: Buffer): Promise<VirtualKeyWithGrants | undefined> {
    const row = await this.db(VirtualKeysTableName).where({ key_hash: hash }).first();
    return row ? (await this.withGrants([row]))[0] : undefined;
  }

  async list(page: Page): Promise<VirtualKeyWithGrants[]> {
    const rows = await this.db(VirtualKeysTableName)
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
    return q(VirtualKeysTableName).where({ id }).forUpdate().first();
  }

  /** Grants go with their key (ON DELETE CASCADE): they are parts of it, not references to it. */
  async delete(id: string, q: Db): Promise<boolean> {
    return (await q(VirtualKeysTableName).where({ id }).delete()) > 0;
  }
}
