import type { Db } from '../db/knex.js';
import {
  A2aPushConfigsTableName,
  type DbA2aPushConfig,
  type DbA2aPushConfigInsert,
} from '../db/tables/index.js';

/** The push notification configs of A2A tasks (runs). Knex only. */
export class A2aPushConfigsRepository {
  constructor(readonly db: Db) {}

  /** Sets the task's config of this id: a new one, or the same id again replaces it. */
  async upsert(row: DbA2aPushConfigInsert): Promise<DbA2aPushConfig> {
    const [stored] = await this.db(A2aPushConfigsTableName)
      .insert(row)
      .onConflict(['run_id', 'id'])
      .merge(['url', 'token_enc', 'auth_scheme', 'credentials_enc'])
      .returning('*');
    return stored!;
  }

  find(runId: string, id: string): Promise<DbA2aPushConfig | undefined> {
    return this.db(A2aPushConfigsTableName).where({ run_id: runId, id }).first();
  }

  findByPk(pk: string): Promise<DbA2aPushConfig | undefined> {
    return this.db(A2aPushConfigsTableName).where({ pk }).first();
  }

  /** The task's configs, oldest first. */
  list(runId: string, limit: number, offset: number): Promise<DbA2aPushConfig[]> {
    return this.db(A2aPushConfigsTableName)
      .where({ run_id: runId })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .limit(limit)
      .offset(offset);
  }

  forRun(runId: string): Promise<DbA2aPushConfig[]> {
    return this.db(A2aPushConfigsTableName).where({ run_id: runId });
  }

  /** Deletes the config; its deliveries go with it (on delete cascade), so nothing more is sent. */
  async delete(runId: string, id: string): Promise<boolean> {
    return (await this.db(A2aPushConfigsTableName).where({ run_id: runId, id }).delete()) > 0;
  }
}
