import { ConflictError, NotFoundError, isUniqueViolation } from '../../core/errors.js';
import type { DbDatasetRow } from '../../core/db/tables/index.js';
import type {
  DatasetsRepository,
  DatasetWithCount,
  NewDatasetRow,
} from '../../core/repositories/datasets.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import type {
  Dataset,
  DatasetCreateBody,
  DatasetRow,
  DatasetRowBody,
  DatasetUpdateBody,
} from '../schemas/datasets.schemas.js';
import { assertInProject, requireProject } from './project-scope.js';

function toDataset(row: DatasetWithCount): Dataset {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    description: row.description,
    row_count: row.row_count,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function toRow(row: DbDatasetRow): DatasetRow {
  return {
    id: row.id,
    dataset_id: row.dataset_id,
    input: row.input,
    context: row.context,
    expected_output: row.expected_output ?? null,
    created_at: row.created_at.toISOString(),
  };
}

const toNewRow = (r: DatasetRowBody): NewDatasetRow => ({
  input: r.input,
  context: r.context ?? null,
  expected_output: r.expected_output ?? null,
});

const nameTaken = () =>
  new ConflictError({ field: 'name', reason: 'a dataset with this name already exists in the project' });

/** Datasets: rows for evaluations, kept per project; rows are added in bulk, each request all or nothing. */
export class DatasetsService {
  constructor(private readonly datasets: DatasetsRepository) {}

  /** The dataset and its first rows, in one transaction. */
  async create(projectId: string, body: DatasetCreateBody): Promise<Dataset> {
    await requireProject(this.datasets.db, projectId);
    try {
      const id = await this.datasets.transaction(async (trx) => {
        const created = await this.datasets.insert(trx, {
          project_id: projectId,
          name: body.name,
          description: body.description ?? null,
        });
        if (body.rows?.length) await this.datasets.insertRows(trx, created.id, body.rows.map(toNewRow));
        return created.id;
      });
      return await this.get(id, projectId);
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }

  async list(projectId: string, page: Page): Promise<Dataset[]> {
    await requireProject(this.datasets.db, projectId);
    return (await this.datasets.list(projectId, page)).map(toDataset);
  }

  async get(id: string, projectId: string | undefined): Promise<Dataset> {
    const row = await this.datasets.findById(id);
    assertInProject(row, projectId, 'dataset');
    return toDataset(row!);
  }

  async update(id: string, projectId: string | undefined, body: DatasetUpdateBody): Promise<Dataset> {
    assertInProject(await this.datasets.findById(id), projectId, 'dataset');
    try {
      if (!(await this.datasets.update(id, body))) throw new NotFoundError('dataset');
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
    return this.get(id, projectId);
  }

  /** The dataset and every row of it. */
  async delete(id: string, projectId: string | undefined): Promise<void> {
    assertInProject(await this.datasets.findById(id), projectId, 'dataset');
    if (!(await this.datasets.delete(id))) throw new NotFoundError('dataset');
  }

  /** Adds the rows in their order, all or none; answers how many were added and how many there are now. */
  async addRows(
    id: string,
    projectId: string | undefined,
    rows: readonly DatasetRowBody[],
  ): Promise<{ dataset_id: string; added: number; row_count: number }> {
    const rowCount = await this.datasets.transaction(async (trx) => {
      // Locked: a concurrent delete of the dataset waits, so the rows cannot lose their dataset midway.
      assertInProject(await this.datasets.lock(trx, id), projectId, 'dataset');
      await this.datasets.insertRows(trx, id, rows.map(toNewRow));
      await this.datasets.touch(trx, id);
      return this.datasets.rowCount(trx, id);
    });
    return { dataset_id: id, added: rows.length, row_count: rowCount };
  }

  async listRows(id: string, projectId: string | undefined, page: Page): Promise<DatasetRow[]> {
    assertInProject(await this.datasets.findById(id), projectId, 'dataset');
    return (await this.datasets.listRows(id, page)).map(toRow);
  }

  async deleteRow(id: string, projectId: string | undefined, rowId: string): Promise<void> {
    await this.datasets.transaction(async (trx) => {
      assertInProject(await this.datasets.lock(trx, id), projectId, 'dataset');
      if (!(await this.datasets.deleteRow(trx, id, rowId))) throw new NotFoundError('dataset row');
      await this.datasets.touch(trx, id);
    });
  }
}
