import type { Db } from '../db/knex.js';
import {
  GatewayResponsesTableName,
  VirtualKeysTableName,
  type DbGatewayResponse,
  type DbGatewayResponseInsert,
} from '../db/tables/index.js';
import { deleteInChunks } from '../db/prune.js';

/**
 * Stored responses. Every read and delete sees only the rows of one virtual
 * key that have not expired: an expired row is gone for callers before the
 * sweep deletes it.
 */
export class GatewayResponsesRepository {
  constructor(private readonly db: Db) {}

  private visible(id: string, keyId: string) {
    return this.db(GatewayResponsesTableName)
      .where({ id, virtual_key_id: keyId })
      .andWhere('expires_at', '>', this.db.fn.now());
  }

  /**
   * One statement; the row expires `retentionDays` after now (the database's
   * clock, as the reads use). Nothing is stored for a deleted key: deleting
   * a key deletes its responses, and a write that waited for that delete's
   * lock on the key re-reads the key once it commits (the `for key share`),
   * so no response of a deleted key lands after the delete. False then.
   */
  async insert(row: DbGatewayResponseInsert, retentionDays: number): Promise<boolean> {
    const result = await this.db.raw<{ rowCount: number }>(
      `insert into ?? (id, virtual_key_id, model, status, input_items, output_items, usage, response,
                       created_at, expires_at)
       select ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?::jsonb, ?::jsonb, ?, now() + ? * interval '1 day'
       where exists (select 1 from ?? where id = ? and deleted_at is null for key share)`,
      [
        GatewayResponsesTableName,
        row.id,
        row.virtual_key_id,
        row.model,
        row.status,
        // node-postgres would send arrays as Postgres arrays, not JSON.
        JSON.stringify(row.input_items),
        JSON.stringify(row.output_items),
        row.usage === null ? null : JSON.stringify(row.usage),
        JSON.stringify(row.response),
        row.created_at,
        retentionDays,
        VirtualKeysTableName,
        row.virtual_key_id,
      ],
    );
    return result.rowCount > 0;
  }

  /** Every response a key stored, expired or not (the key is being deleted: `trx` is its delete's). */
  async deleteByKey(keyId: string, trx: Db): Promise<number> {
    return trx(GatewayResponsesTableName).where({ virtual_key_id: keyId }).delete();
  }

  async find(id: string, keyId: string): Promise<DbGatewayResponse | undefined> {
    return this.visible(id, keyId).first();
  }

  /** What a follow-up turn (`previous_response_id`) needs: the conversation so far. */
  async conversation(
    id: string,
    keyId: string,
  ): Promise<Pick<DbGatewayResponse, 'input_items' | 'output_items'> | undefined> {
    return this.visible(id, keyId).first('input_items', 'output_items');
  }

  /** True when a visible row was deleted. */
  async delete(id: string, keyId: string): Promise<boolean> {
    return (await this.visible(id, keyId).delete()) > 0;
  }

  /**
   * Deletes expired rows in chunks, one replica at a time (an advisory lock;
   * the others skip the round). Idempotent: a row is deleted once whoever
   * runs it. Returns the rows deleted.
   */
  sweepExpired(chunk = 1_000): Promise<number> {
    return deleteInChunks(
      this.db,
      'agent-server:sweep-gateway-responses',
      `delete from gateway_responses where id in (
         select id from gateway_responses where expires_at <= now() limit ?)`,
      [],
      chunk,
    );
  }
}
