import { notifyChange } from '../cache/change-feed.js';
import type { SecretBox } from '../../core/crypto/secrets.js';
import { SecretDecryptionError, redactHeaders } from '../../core/crypto/secrets.js';
import type { Db } from '../../core/db/knex.js';
import type { DbProvider, DbProviderUpdate } from '../../core/db/tables/index.js';
import { ConflictError, NotFoundError, ValidationError, isUniqueViolation } from '../../core/errors.js';
import { keepRedactedUrl, redactUrl } from '../../core/security/redact.js';
import type { Logger } from '../../core/logger.js';
import type { ProvidersRepository } from '../../core/repositories/providers.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import {
  REDACTED,
  type Provider,
  type ProviderCreateBody,
  type ProviderUpdateBody,
} from '../schemas/providers.schemas.js';

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_TIMEOUT_MS = 600_000;

const nameTaken = () =>
  new ConflictError({ field: 'name', reason: 'a provider with this name already exists' });

/** Short keys would be mostly revealed by their last four characters. */
function last4(apiKey: string): string | null {
  return apiKey.length >= 12 ? apiKey.slice(-4) : null;
}

/**
 * Providers hold the real vendor keys. The key and the header values are
 * encrypted before they reach the repository and are never returned: callers
 * see `has_api_key`, `api_key_last4` and redacted headers.
 */
export class ProvidersService {
  constructor(
    private readonly providers: ProvidersRepository,
    private readonly db: Db,
    private readonly secrets: SecretBox,
    private readonly log: Logger,
  ) {}

  private headersOf(row: DbProvider): Record<string, string> {
    if (!row.headers_enc) return {};
    try {
      return this.secrets.decryptJson<Record<string, string>>(row.headers_enc);
    } catch (err) {
      // Start-up checks SECRETS_KEY, so this is a row written under another key;
      // one such row must not make every provider listing fail.
      if (!(err instanceof SecretDecryptionError)) throw err;
      this.log.warn({ provider_id: row.id }, 'provider headers cannot be decrypted with this SECRETS_KEY');
      return {};
    }
  }

  private toProvider(row: DbProvider): Provider {
    return {
      id: row.id,
      name: row.name,
      provider_type: row.provider_type,
      // The stored URL keeps its credentials (calls need them); what is shown does not.
      base_url: row.base_url === null ? null : redactUrl(row.base_url),
      has_api_key: row.api_key_enc !== null,
      api_key_last4: row.api_key_enc !== null ? row.api_key_last4 : null,
      headers: redactHeaders(this.headersOf(row)),
      connect_timeout_ms: row.connect_timeout_ms,
      timeout_ms: row.timeout_ms,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }

  private encryptHeaders(headers: Record<string, string> | null | undefined): string | null {
    return headers && Object.keys(headers).length > 0 ? this.secrets.encryptJson(headers) : null;
  }

  private apiKeyColumns(apiKey: string | null): Pick<DbProviderUpdate, 'api_key_enc' | 'api_key_last4'> {
    return apiKey === null
      ? { api_key_enc: null, api_key_last4: null }
      : { api_key_enc: this.secrets.encrypt(apiKey), api_key_last4: last4(apiKey) };
  }

  async create(body: ProviderCreateBody): Promise<Provider> {
    if (body.headers) this.rejectRedactedPlaceholders(body.headers, {});
    try {
      const row = await this.providers.insert({
        name: body.name,
        provider_type: body.provider_type,
        base_url: body.base_url ?? null,
        ...this.apiKeyColumns(body.api_key ?? null),
        headers_enc: this.encryptHeaders(body.headers),
        connect_timeout_ms: body.connect_timeout_ms ?? DEFAULT_CONNECT_TIMEOUT_MS,
        timeout_ms: body.timeout_ms ?? DEFAULT_TIMEOUT_MS,
      });
      return this.toProvider(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }

  async list(page: Page): Promise<Provider[]> {
    return (await this.providers.list(page)).map((r) => this.toProvider(r));
  }

  async get(id: string): Promise<Provider> {
    const row = await this.providers.findById(id);
    if (!row) throw new NotFoundError('provider');
    return this.toProvider(row);
  }

  /**
   * A client that read the provider gets `[redacted]` for sensitive header
   * values; sending the map back unchanged keeps the stored value rather than
   * storing the placeholder. `[redacted]` for a header that had no value is a 400.
   */
  private rejectRedactedPlaceholders(next: Record<string, string>, stored: Record<string, string>): void {
    for (const [name, value] of Object.entries(next)) {
      if (value === REDACTED && stored[name] === undefined) {
        throw ValidationError.field(
          `headers.${name}`,
          `"${REDACTED}" keeps a stored value, and headers.${name} has none`,
          'any.invalid',
        );
      }
    }
  }

  /** A base_url sent back as it was shown (credentials redacted) keeps the stored one; see keepRedactedUrl. */
  private sentBackBaseUrl(sent: string | null, stored: string | null): string | null {
    if (sent === null) return null;
    const url = keepRedactedUrl(sent, stored);
    if (url === undefined)
      throw ValidationError.field(
        'base_url',
        `"${REDACTED}" keeps the stored credentials, and the URL around it changed`,
        'any.invalid',
      );
    return url;
  }

  async update(id: string, body: ProviderUpdateBody): Promise<Provider> {
    const current = await this.providers.findById(id);
    if (!current) throw new NotFoundError('provider');
    const patch: DbProviderUpdate = {};
    if (body.name !== undefined) patch.name = body.name;
    if (body.provider_type !== undefined) patch.provider_type = body.provider_type;
    if (body.base_url !== undefined) patch.base_url = this.sentBackBaseUrl(body.base_url, current.base_url);
    if (body.connect_timeout_ms !== undefined) patch.connect_timeout_ms = body.connect_timeout_ms;
    if (body.timeout_ms !== undefined) patch.timeout_ms = body.timeout_ms;
    // Rotating the key is an update; `null` removes it.
    if (body.api_key !== undefined) Object.assign(patch, this.apiKeyColumns(body.api_key));
    if (body.headers !== undefined) {
      const stored = this.headersOf(current);
      const next = { ...(body.headers ?? {}) };
      this.rejectRedactedPlaceholders(next, stored);
      for (const [name, value] of Object.entries(next)) if (value === REDACTED) next[name] = stored[name]!;
      patch.headers_enc = this.encryptHeaders(next);
    }
    if (body.provider_type !== undefined && body.provider_type !== current.provider_type) {
      // Models pinned to this provider promise its type; changing it under them would break that.
      const mismatched = await this.providers.modelsOfOtherType(id, body.provider_type);
      if (mismatched.length > 0) {
        throw new ConflictError({
          field: 'provider_type',
          reason: 'models of another provider_type use this provider',
          referenced_by: mismatched,
        });
      }
    }
    try {
      const row = await this.db.transaction(async (trx) => {
        const updated = await this.providers.update(id, patch, trx);
        if (updated && body.name !== undefined && body.name !== current.name) {
          await this.providers.renameInFallbacks(current.name, body.name, trx);
          // Fallback lists of keys changed too: the gateway's key cache must drop them.
          await notifyChange(trx, 'virtual_keys', '*');
        }
        // Gateways cache providers (with their keys): a rotated key or new base_url applies at once.
        await notifyChange(trx, 'providers', id);
        return updated;
      });
      if (!row) throw new NotFoundError('provider');
      return this.toProvider(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }

  /** Never cascades: a provider that virtual keys or models still use is a 409 naming them. */
  async delete(id: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      const row = await this.providers.lockById(id, trx);
      if (!row) throw new NotFoundError('provider');
      const referencedBy = await this.providers.referrers(row, trx);
      if (referencedBy.length > 0) {
        throw new ConflictError({ reason: 'still referenced', referenced_by: referencedBy });
      }
      await this.providers.delete(id, trx);
      await notifyChange(trx, 'providers', id);
    });
  }
}
