import type { Db } from '../db/knex.js';
import {
  ProjectsTableName,
  type DbProject,
  type DbProjectInsert,
  type DbProjectUpdate,
} from '../db/tables.js';
import type { Page } from '../schemas/common.schemas.js';

export class ProjectsRepository {
  constructor(private readonly db: Db) {}

  async insert(row: DbProjectInsert): Promise<DbProject> {
    const [created] = await this.db(ProjectsTableName).insert(row).returning('*');
    return created!;
  }

  async list(page: Page): Promise<DbProject[]> {
    return this.db(ProjectsTableName)
      .select('*')
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset);
  }

  async findById(id: string): Promise<DbProject | undefined> {
    return this.db(ProjectsTableName).where({ id }).first();
  }

  async update(id: string, patch: DbProjectUpdate): Promise<DbProject | undefined> {
    const [updated] = await this.db(ProjectsTableName)
      .where({ id })
      .update({ ...patch, updated_at: this.db.fn.now() as unknown as Date })
      .returning('*');
    return updated;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db(ProjectsTableName).where({ id }).delete()) > 0;
  }
}
