import type { Knex } from 'knex';
import type { JsonText, Timestamp } from './columns.js';
import type { ProviderType } from './providers.js';

export const ModelsTableName = 'models';

export type DbModel = {
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
};
/** What a write sends: jsonb columns as JSON text. */
export type DbModelWrite = {
  project_id: string;
  name: string;
  model_id: string;
  provider_type: ProviderType;
  provider_id: string | null;
  parameters: JsonText;
  pricing: JsonText | null;
  max_output_tokens: number | null;
  updated_at: Timestamp;
};
/** Columns with a database default (or nullable) may be left out of an insert. */
export type DbModelInsert = Pick<DbModelWrite, 'project_id' | 'name' | 'model_id' | 'provider_type'> &
  Partial<Pick<DbModelWrite, 'provider_id' | 'parameters' | 'pricing' | 'max_output_tokens'>>;
export type DbModelUpdate = Partial<DbModelWrite>;

export type ModelsTable = Knex.CompositeTableType<DbModel, DbModelInsert, DbModelUpdate>;
