import type { Knex } from 'knex';
import type { JsonText, Timestamp } from './columns.js';

export const DatasetsTableName = 'datasets';
export const DatasetRowsTableName = 'dataset_rows';

/** A named set of evaluation rows in a project; goes with its project. */
export type DbDataset = {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  created_at: Date;
  updated_at: Date;
};
export type DbDatasetInsert = Pick<DbDataset, 'project_id' | 'name'> &
  Partial<Pick<DbDataset, 'description'>>;
export type DbDatasetUpdate = Partial<Pick<DbDataset, 'name' | 'description'>> & { updated_at?: Timestamp };

export type DatasetsTable = Knex.CompositeTableType<DbDataset, DbDatasetInsert, DbDatasetUpdate>;

/** A user message as converse takes it: text, or content parts. */
export type DatasetInput = string | Array<Record<string, unknown>>;

/** One case of a dataset; goes with its dataset. */
export type DbDatasetRow = {
  id: string;
  dataset_id: string;
  /** The order rows were added in (bigint: node-pg returns it as a string). */
  seq: string;
  input: DatasetInput;
  /** Template variables, as a conversation's context. */
  context: Record<string, unknown> | null;
  /** What a good answer is: text or any JSON. */
  expected_output: unknown;
  created_at: Date;
};
/** jsonb columns are written as JSON text (node-pg would send an array as a Postgres array). */
export type DbDatasetRowInsert = {
  dataset_id: string;
  input: JsonText;
  context: JsonText | null;
  expected_output: JsonText | null;
};
/** Rows are never edited (deleted and added again); the type exists for Knex's composite. */
export type DbDatasetRowUpdate = Partial<DbDatasetRowInsert>;

export type DatasetRowsTable = Knex.CompositeTableType<DbDatasetRow, DbDatasetRowInsert, DbDatasetRowUpdate>;
