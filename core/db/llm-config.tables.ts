import type { Knex } from 'knex';

/**
 * Typed rows of the tables behind providers, virtual keys and models. jsonb
 * columns are written as JSON text (node-pg would turn a JS array into a
 * Postgres array literal) and read back parsed, hence the composite types.
 */

export const ProvidersTableName = 'providers';
export type ProviderType = 'openai' | 'anthropic' | 'gemini';
export interface DbProvider {
  id: string;
  name: string;
  provider_type: ProviderType;
  base_url: string | null;
  api_key_enc: string | null;
  api_key_last4: string | null;
  headers_enc: string | null;
  connect_timeout_ms: number;
  timeout_ms: number;
  created_at: Date;
  updated_at: Date;
}
/** Columns with a database default may be left out. */
export type DbProviderInsert = Pick<DbProvider, 'name' | 'provider_type'> &
  Partial<Omit<DbProvider, 'id' | 'name' | 'provider_type' | 'created_at' | 'updated_at'>>;
export type DbProviderUpdate = Partial<DbProviderInsert> & { updated_at?: Date };

export const VirtualKeysTableName = 'virtual_keys';
export interface DbVirtualKey {
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
}
/** What a write sends: jsonb columns as JSON text. */
export interface DbVirtualKeyWrite {
  name: string;
  key_hash: Buffer;
  key_prefix: string;
  expires_at: Date | null;
  rate_limit: string | null;
  budget: string | null;
  fallbacks: string;
  updated_at: Date;
  deleted_at?: Date;
}

export const VirtualKeyGrantsTableName = 'virtual_key_grants';
export interface DbVirtualKeyGrant {
  virtual_key_id: string;
  provider_id: string;
  model_names: string[];
  position: number;
}
export interface DbVirtualKeyGrantWrite {
  virtual_key_id: string;
  provider_id: string;
  model_names: string;
  position: number;
}

export const ModelsTableName = 'models';
export interface DbModel {
  id: string;
  project_id: string;
  name: string;
  model_id: string;
  provider_type: ProviderType;
  provider_id: string | null;
  parameters: Record<string, unknown>;
  pricing: {
    input_per_million_usd: number;
    output_per_million_usd: number;
    /** Prompt-cache rates; absent: charged at the input price (core/metering/pricing.ts). */
    cache_read_per_million_usd?: number;
    cache_write_per_million_usd?: number;
  } | null;
  /** The most tokens one answer may hold (the reservation of a call that sets no limit); null: the shipped table's. */
  max_output_tokens: number | null;
  created_at: Date;
  updated_at: Date;
}
/** Columns with a database default (or nullable) may be left out of an insert. */
export type DbModelInsert = Pick<DbModelWrite, 'project_id' | 'name' | 'model_id' | 'provider_type'> &
  Partial<Pick<DbModelWrite, 'provider_id' | 'parameters' | 'pricing' | 'max_output_tokens'>>;
export interface DbModelWrite {
  project_id: string;
  name: string;
  model_id: string;
  provider_type: ProviderType;
  provider_id: string | null;
  parameters: string;
  pricing: string | null;
  max_output_tokens: number | null;
  updated_at: Date;
}

declare module 'knex/types/tables.js' {
  interface Tables {
    providers: Knex.CompositeTableType<DbProvider, DbProviderInsert, DbProviderUpdate>;
    virtual_keys: Knex.CompositeTableType<
      DbVirtualKey,
      Omit<DbVirtualKeyWrite, 'updated_at'>,
      Partial<DbVirtualKeyWrite>
    >;
    virtual_key_grants: Knex.CompositeTableType<DbVirtualKeyGrant, DbVirtualKeyGrantWrite>;
    models: Knex.CompositeTableType<DbModel, DbModelInsert, Partial<DbModelWrite>>;
  }
}
