import type { Knex } from 'knex';
import type { JsonText } from './columns.js';

export const VirtualKeyGrantsTableName = 'virtual_key_grants';

export type DbVirtualKeyGrant = {
  virtual_key_id: string;
  provider_id: string;
  /** The models of the provider the key may call; `*` for all. */
  model_names: string[];
  position: number;
};
/** What a write sends: `model_names` as JSON text. */
export type DbVirtualKeyGrantWrite = {
  virtual_key_id: string;
  provider_id: string;
  model_names: JsonText;
  position?: number;
};
export type DbVirtualKeyGrantUpdate = Partial<DbVirtualKeyGrantWrite>;

export type VirtualKeyGrantsTable = Knex.CompositeTableType<
  DbVirtualKeyGrant,
  DbVirtualKeyGrantWrite,
  DbVirtualKeyGrantUpdate
>;
