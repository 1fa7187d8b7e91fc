import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import {
  DatasetRowsTableName,
  DatasetsTableName,
  type DatasetInput,
  type DbDataset,
  type DbDatasetInsert,
  type DbDatasetRow,
  type DbDatasetUpdate,
} from '../db/tables/index.js';
import type { Page } from './types.js';

/** A dataset with how many rows it holds. */
export type DatasetWithCount = DbDataset & { row_count: number };

/** A row as it is added: the columns' values, before they become JSON text. */
export interface NewDatasetRow {
  input: DatasetInput;
  context?: Record<string, unknown> | null;
  expected_output?: unknown;
}

/** Rows per INSERT statement: well under Postgres's 65,535 bind parameters. */
const INSERT_CHUNK = 500;

const toJsonText = (v: unknown): string | null => (v === undefined || v === null ? null : JSON.stringify(v));

/** Knex only. */
export class DatasetsRepository {
  constructor(readonly db: Db) {}

  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** The dataset's columns and its row count, counted by the index on (dataset_id, seq). */
  private withCount(q: Knex) {
    const count = q(DatasetRowsTableName)
      .whereRaw('??.dataset_id = ??.id', [DatasetRowsTableName, DatasetsTableName])
      .count('*');
    return q(DatasetsTableName).select<DatasetWithCount[]>(
      `${DatasetsTableName}.*`,
      q.raw('(?)::int as row_count', [count]),
    );
  }

  async insert(q: Knex, row: DbDatasetInsert): Promise<DbDataset> {
    const [created] = await q(DatasetsTableName).insert(row).returning('*');
    return created!;
  }

  async list(projectId: string, page: Page): Promise<DatasetWithCount[]> {
    return this.withCount(this.db)
      .where(`${DatasetsTableName}.project_id`, projectId)
      .orderBy([
        { column: `${DatasetsTableName}.created_at`, order: 'desc' },
        { column: `${DatasetsTableName}.id`, order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset);
  }

  async findById(id: string, q: Knex = this.db): Promise<DatasetWithCount | undefined> {
    return this.withCount(q).where(`${DatasetsTableName}.id`, id).first();
  }

  /** The dataset, locked until the transaction ends (a concurrent delete waits). */
  async lock(q: Knex, id: string): Promise<DbDataset | undefined> {
    return q(DatasetsTableName).where({ id }).forUpdate().first();
  }

  async rowCount(q: Knex, id: string): Promise<number> {
    const row = await q(DatasetRowsTableName).where({ dataset_id: id }).count({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }

  async update(id: string, patch: DbDatasetUpdate): Promise<DbDataset | undefined> {
    const [updated] = await this.db(DatasetsTableName)
      .where({ id })
      .update({ ...patch, updated_at: this.db.fn.now() })
      .returning('*');
    return updated;
  }

  /** Marks the dataset changed (its rows were). */
  async touch(q: Knex, id: string): Promise<void> {
    await q(DatasetsTableName).where({ id }).update({ updated_at: q.fn.now() });
  }

  /** Deletes the dataset; its rows go with it (ON DELETE CASCADE). False when it did not exist. */
  async delete(id: string): Promise<boolean> {
    return (await this.db(DatasetsTableName).where({ id }).delete()) > 0;
  }

  /** Adds rows in their order, in the caller's transaction (all or none). */
  async insertRows(q: Knex, datasetId: string, rows: readonly NewDatasetRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      const chunk = rows.slice(i, i + INSERT_CHUNK).map((r) => ({
        dataset_id: datasetId,
        input: JSON.stringify(r.input),
        context: toJsonText(r.context),
        expected_output: toJsonText(r.expected_output),
      }));
      await q(DatasetRowsTableName).insert(chunk);
    }
  }

  /** A page of the dataset's rows, in the order they were added. */
  async listRows(datasetId: string, page: Page): Promise<DbDatasetRow[]> {
    return this.db(DatasetRowsTableName)
      .where({ dataset_id: datasetId })
      .orderBy('seq', 'asc')
      .limit(page.limit)
      .offset(page.offset);
  }

  /** Deletes one row of the dataset. False when the dataset has no such row. */
  async deleteRow(q: Knex, datasetId: string, rowId: string): Promise<boolean> {
    return (await q(DatasetRowsTableName).where({ id: rowId, dataset_id: datasetId }).delete()) > 0;
  }
}
