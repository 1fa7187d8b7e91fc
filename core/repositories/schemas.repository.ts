import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import {
  AgentsTableName,
  SchemasTableName,
  type DbSchema,
  type DbSchemaInsert,
  type DbSchemaUpdate,
} from '../db/tables/index.js';
import type { Page } from './types.js';

// jsonb columns take JSON text: node-pg would send a JS array as a Postgres array literal.
const toJsonb = <T extends { schema?: DbSchemaUpdate['schema'] }>(row: T): T =>
  row.schema === undefined ? row : { ...row, schema: JSON.stringify(row.schema) };

/** Knex only. */
export class SchemasRepository {
  constructor(readonly db: Db) {}

  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async insert(row: DbSchemaInsert): Promise<DbSchema> {
    const [created] = await this.db(SchemasTableName).insert(toJsonb(row)).returning('*');
    return created!;
  }

  async list(projectId: string, page: Page): Promise<DbSchema[]> {
    return this.db(SchemasTableName)
      .where({ project_id: projectId })
      .select('*')
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset);
  }

  async findById(id: string, q: Knex = this.db): Promise<DbSchema | undefined> {
    return q(SchemasTableName).where({ id }).first();
  }

  async lock(q: Knex, id: string): Promise<DbSchema | undefined> {
    return q(SchemasTableName).where({ id }).forUpdate().first();
  }

  async update(id: string, patch: DbSchemaUpdate): Promise<DbSchema | undefined> {
    const [updated] = await this.db(SchemasTableName)
      .where({ id })
      .update({ ...toJsonb(patch), updated_at: this.db.fn.now() })
      .returning('*');
    return updated;
  }

  async referencingAgents(q: Knex, schemaId: string): Promise<Array<{ id: string; name: string }>> {
    return q(AgentsTableName).where('schema_id', schemaId).select('id', 'name').orderBy('name');
  }

  async delete(q: Knex, id: string): Promise<void> {
    await q(SchemasTableName).where({ id }).delete();
  }
}
