import { notifyChange } from '../cache/change-feed.js';
import type { Db } from '../../core/db/knex.js';
import type { DbVirtualKeyWrite } from '../../core/db/tables/index.js';
import {
  ConflictError,
  NotFoundError,
  ValidationError,
  type FieldError,
  isUniqueViolation,
} from '../../core/errors.js';
import { hashVirtualKeySecret, newVirtualKeySecret } from '../../core/security/virtual-keys.js';
import { GatewayResponsesRepository } from '../../core/repositories/gateway-responses.repository.js';
import {
  VirtualKeysRepository,
  type VirtualKeyWithGrants,
} from '../../core/repositories/virtual-keys.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import type {
  VirtualKey,
  VirtualKeyCreateBody,
  VirtualKeyUpdateBody,
  VirtualKeyWithSecret,
} from '../schemas/virtual-keys.schemas.js';

function toVirtualKey(row: VirtualKeyWithGrants): VirtualKey {
  return {
    id: row.id,
    name: row.name,
    key_prefix: row.key_prefix,
    providers: row.grants.map((g) => ({ provider_id: g.provider_id, model_names: g.model_names })),
    expires_at: row.expires_at ? row.expires_at.toISOString() : null,
    rate_limit: row.rate_limit,
    budget: row.budget,
    fallbacks: row.fallbacks,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const json = (value: unknown): string | null => (value == null ? null : JSON.stringify(value));

const nameTaken = () =>
  new ConflictError({ field: 'name', reason: 'a virtual key with this name already exists' });

/** The live key whose secret this is, as the API shows keys (undefined for a deleted key, which is revoked). */
export async function findVirtualKeyBySecret(db: Db, secret: string): Promise<VirtualKey | undefined> {
  const row = await new VirtualKeysRepository(db).findByHash(hashVirtualKeySecret(secret));
  return row ? toVirtualKey(row) : undefined;
}

export class VirtualKeysService {
  private readonly responses: GatewayResponsesRepository;

  constructor(
    private readonly keys: VirtualKeysRepository,
    private readonly db: Db,
    /** Clears this replica's gateway key cache at once after a write (others hear of it by notification). */
    private readonly keyChanged: () => void,
  ) {
    this.responses = new GatewayResponsesRepository(db);
  }

  /**
   * Every provider a grant or fallback names must exist; each dangling one is
   * a 400 naming its field. Runs inside the write's transaction, which holds
   * the providers share-locked until the grants are written.
   */
  private async checkProviders(body: VirtualKeyUpdateBody, trx: Db): Promise<void> {
    const grants = body.providers ?? [];
    const fallbackNames = (body.fallbacks ?? []).map((f) => f.slice(0, f.indexOf('/')));
    const found = await this.keys.lockProviders(
      grants.map((g) => g.provider_id),
      fallbackNames,
      trx,
    );
    const ids = new Set(found.map((p) => p.id));
    const names = new Set(found.map((p) => p.name));
    const fields: FieldError[] = [];
    grants.forEach((g, i) => {
      if (!ids.has(g.provider_id)) {
        const field = `providers.${i}.provider_id`;
        fields.push({ field, message: `${field} does not name an existing provider`, type: 'any.reference' });
      }
    });
    fallbackNames.forEach((n, i) => {
      if (!names.has(n)) {
        const field = `fallbacks.${i}`;
        fields.push({ field, message: `${field} names no existing provider "${n}"`, type: 'any.reference' });
      }
    });
    if (fields.length > 0) throw new ValidationError(fields);
  }

  private columns(body: VirtualKeyUpdateBody): Partial<DbVirtualKeyWrite> {
    const out: Partial<DbVirtualKeyWrite> = {};
    if (body.name !== undefined) out.name = body.name;
    if (body.expires_at !== undefined)
      out.expires_at = body.expires_at === null ? null : new Date(body.expires_at);
    if (body.rate_limit !== undefined) out.rate_limit = json(body.rate_limit);
    if (body.budget !== undefined) out.budget = json(body.budget);
    if (body.fallbacks !== undefined) out.fallbacks = JSON.stringify(body.fallbacks);
    return out;
  }

  async create(body: VirtualKeyCreateBody): Promise<VirtualKeyWithSecret> {
    const { secret, key_hash, key_prefix } = newVirtualKeySecret();
    try {
      const row = await this.db.transaction(async (trx) => {
        await this.checkProviders(body, trx);
        const created = await this.keys.insert(
          {
            name: body.name,
            key_hash,
            key_prefix,
            expires_at: null,
            rate_limit: null,
            budget: null,
            fallbacks: '[]',
            ...this.columns(body),
          },
          trx,
        );
        await this.keys.replaceGrants(created.id, body.providers, trx);
        return (await this.keys.findById(created.id, trx))!;
      });
      return { ...toVirtualKey(row), secret_key: secret };
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }

  async list(page: Page): Promise<VirtualKey[]> {
    return (await this.keys.list(page)).map(toVirtualKey);
  }

  async get(id: string): Promise<VirtualKey> {
    const row = await this.keys.findById(id);
    if (!row) throw new NotFoundError('virtual key');
    return toVirtualKey(row);
  }

  /** `providers`, when given, replaces every grant; `null` clears `expires_at`, `rate_limit`, `budget`. */
  async update(id: string, body: VirtualKeyUpdateBody): Promise<VirtualKey> {
    try {
      const row = await this.db.transaction(async (trx) => {
        if (!(await this.keys.lockById(id, trx))) throw new NotFoundError('virtual key');
        await this.checkProviders(body, trx);
        await this.keys.update(id, this.columns(body), trx);
        if (body.providers !== undefined) await this.keys.replaceGrants(id, body.providers, trx);
        await notifyChange(trx, 'virtual_keys', id); // gateway caches drop the key on every replica
        return (await this.keys.findById(id, trx))!;
      });
      this.keyChanged();
      return toVirtualKey(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }

  /** A new secret; the old hash is overwritten, so the old secret stops working on the next request. */
  async rotate(id: string): Promise<VirtualKeyWithSecret> {
    const { secret, key_hash, key_prefix } = newVirtualKeySecret();
    const row = await this.db.transaction(async (trx) => {
      if (!(await this.keys.update(id, { key_hash, key_prefix }, trx)))
        throw new NotFoundError('virtual key');
      await notifyChange(trx, 'virtual_keys', id);
      return (await this.keys.findById(id, trx))!;
    });
    this.keyChanged();
    return { ...toVirtualKey(row), secret_key: secret };
  }

  /**
   * A soft delete: the key is revoked at once and hidden (get, list, update,
   * rotate and a second delete answer 404; its name is free again), while its
   * usage stays readable at /virtual-keys/{id}/usage. The Responses API
   * answers it stored (whole conversations) are deleted in the same
   * transaction; one still being answered is not stored afterwards (see
   * GatewayResponsesRepository.insert). A key that still meters a project is
   * a 409 naming the projects, and nothing is deleted.
   */
  async delete(id: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      if (!(await this.keys.lockById(id, trx))) throw new NotFoundError('virtual key');
      const referencedBy = await this.keys.referrers(id, trx);
      if (referencedBy.length > 0) {
        throw new ConflictError({ reason: 'still referenced', referenced_by: referencedBy });
      }
      await this.keys.softDelete(id, trx);
      await this.responses.deleteByKey(id, trx);
      await notifyChange(trx, 'virtual_keys', id);
    });
    this.keyChanged();
  }
}
