import type { Knex } from 'knex';
import type { JsonText, Timestamp } from './columns.js';

export const VirtualKeysTableName = 'virtual_keys';

export type DbVirtualKey = {
  id: string;
  name: string;
  key_hash: Buffer;
  key_prefix: string;
  expires_at: Date | null;
  rate_limit: { requests_per_minute?: number; tokens_per_minute?: number } | null;
  budget: { max_usd: number; period: 'day' | 'week' | 'month' | 'total' } | null;
  fallbacks: string[];
  created_at: Date;
  updated_at: Date;
  /** Set by DELETE: the key is revoked and hidden, its row kept for its usage history. */
  deleted_at: Date | null;
};
/** What a write sends: jsonb columns as JSON text. */
export type DbVirtualKeyWrite = {
  name: string;
  key_hash: Buffer;
  key_prefix: string;
  expires_at: Date | null;
  rate_limit: JsonText | null;
  budget: JsonText | null;
  fallbacks: JsonText;
  updated_at: Timestamp;
  deleted_at?: Timestamp;
};
export type DbVirtualKeyInsert = Omit<DbVirtualKeyWrite, 'updated_at'>;
/** `fallbacks` may be rewritten in SQL (a provider's rename). */
export type DbVirtualKeyUpdate = Partial<Omit<DbVirtualKeyWrite, 'fallbacks'>> & {
  fallbacks?: JsonText | Knex.Raw;
};

export type VirtualKeysTable = Knex.CompositeTableType<DbVirtualKey, DbVirtualKeyInsert, DbVirtualKeyUpdate>;
