import { once } from 'node:events';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { ItemExporter } from './batch-processor.js';
import type { Db } from '../db/knex.js';
import { deleteInChunks } from '../db/prune.js';
import { coalesceLines, SPAN_COLUMNS } from './span-row.js';

const COLUMNS = SPAN_COLUMNS.join(', ');

/** Knex's pool, as far as this exporter uses it: COPY needs the driver's own client. */
export interface ConnectionPool {
  acquireConnection(): Promise<pg.PoolClient>;
  releaseConnection(client: pg.PoolClient): Promise<void>;
}
const UNIQUE_VIOLATION = '23505';

/**
 * Writes finished spans (already encoded COPY lines, `spanToCopyLine`) to the
 * `spans` table with one `COPY … FROM STDIN` per batch: no statement to plan,
 * no JSON envelope for Postgres to parse, no speculative insertion. COPY has
 * no ON CONFLICT, so a batch holding a span that is already stored (a
 * workflow task re-run after its worker died emits its workflow spans again,
 * with the same ids; the unique index that catches them covers workflow spans
 * only, migration 20261123000100) is written again through a temporary
 * table, skipping the spans already there.
 */
export class PostgresSpanExporter implements ItemExporter<Buffer> {
  constructor(private readonly db: Db) {}

  export(lines: Buffer[], resultCallback: (result: ExportResult) => void): void {
    this.write(coalesceLines(lines)).then(
      () => resultCallback({ code: ExportResultCode.SUCCESS }),
      (err: unknown) => resultCallback({ code: ExportResultCode.FAILED, error: err as Error }),
    );
  }

  async shutdown(): Promise<void> {}

  private async write(data: Buffer[]): Promise<void> {
    const pool = this.db.client as ConnectionPool;
    const client = await pool.acquireConnection();
    try {
      try {
        await copy(client, `copy spans (${COLUMNS}) from stdin`, data);
      } catch (err) {
        if ((err as { code?: string }).code !== UNIQUE_VIOLATION) throw err;
        await client.query('begin');
        try {
          await client.query(
            'create temporary table spans_incoming (like spans including defaults) on commit drop',
          );
          await copy(client, `copy spans_incoming (${COLUMNS}) from stdin`, data);
          await client.query(
            `insert into spans (${COLUMNS}) select ${COLUMNS} from spans_incoming on conflict do nothing`,
          );
          await client.query('commit');
        } catch (inner) {
          await client.query('rollback').catch(() => undefined);
          throw inner;
        }
      }
    } finally {
      await pool.releaseConnection(client);
    }
  }
}

async function copy(client: pg.PoolClient, sql: string, data: Buffer[]): Promise<void> {
  const stream = client.query(copyFrom(sql));
  const done = once(stream, 'finish');
  for (const part of data) stream.write(part);
  stream.end();
  await done;
}

/** Deletes spans older than the retention (in chunks, one replica at a time). */
export function pruneSpans(db: Db, retentionDays: number, chunk = 10_000): Promise<number> {
  const cutoff = new Date(Date.now() - retentionDays * 86_400_000);
  return deleteInChunks(
    db,
    'agent-server:prune-spans',
    `delete from spans where ctid in (select ctid from spans where start_time < ? limit ?)`,
    [cutoff],
    chunk,
  );
}
