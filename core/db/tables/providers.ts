import type { Knex } from 'knex';
import type { Timestamp } from './columns.js';

export const ProvidersTableName = 'providers';

export type ProviderType = 'openai' | 'anthropic' | 'gemini';

export type DbProvider = {
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
};
/** Columns with a database default may be left out. */
export type DbProviderInsert = Pick<DbProvider, 'name' | 'provider_type'> &
  Partial<Omit<DbProvider, 'id' | 'name' | 'provider_type' | 'created_at' | 'updated_at'>>;
export type DbProviderUpdate = Partial<DbProviderInsert> & { updated_at?: Timestamp };

export type ProvidersTable = Knex.CompositeTableType<DbProvider, DbProviderInsert, DbProviderUpdate>;
