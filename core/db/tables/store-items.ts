import type { Knex } from 'knex';
import type { JsonText, Timestamp } from './columns.js';

export const StoreItemsTableName = 'store_items';

/**
 * One item of a project's memory store: a JSON object under a namespace path
 * and a key. An item whose `expires_at` has passed is gone for every reader
 * at once; the worker's housekeeping deletes the row later.
 */
export type DbStoreItem = {
  project_id: string;
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  /** What was indexed, embedded by the project's store embedding model; null: not searchable by meaning. */
  embedding: number[] | null;
  /** The item's time to live, kept so a read can push `expires_at` forward again; null: it never expires. */
  ttl_minutes: number | null;
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
};
export type DbStoreItemInsert = Pick<DbStoreItem, 'project_id' | 'namespace' | 'key'> & {
  value: JsonText;
  embedding: number[] | null;
  ttl_minutes: number | null;
  expires_at: Timestamp | null;
};

export type StoreItemsTable = Knex.CompositeTableType<DbStoreItem, DbStoreItemInsert, never>;

declare module 'knex/types/tables.js' {
  interface Tables {
    store_items: StoreItemsTable;
  }
}
