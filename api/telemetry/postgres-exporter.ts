import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ItemExporter } from './batch-processor.js';
import type { Db } from '../db/knex.js';
import { deleteInChunks } from '../db/prune.js';
import { SPAN_WIRE_INSERT, spanToWireJson } from './span-row.js';

/** A span as the JSON of its row's wire form: what the Postgres queue holds (see BoundedBatchProcessor). */
export const spanToRowJson = spanToWireJson;

/**
 * Writes finished spans (already serialised by `spanToRowJson`) to the `spans`
 * table: the whole batch as one json parameter, since building a 17-column
 * multi-row insert costs the api far more CPU. A span seen twice (an export
 * retried after a timeout) is ignored, not an error.
 */
export class PostgresSpanExporter implements ItemExporter<string> {
  constructor(private readonly db: Db) {}

  export(rows: string[], resultCallback: (result: ExportResult) => void): void {
    this.db.raw(SPAN_WIRE_INSERT, [`[${rows.join(',')}]`]).then(
      () => resultCallback({ code: ExportResultCode.SUCCESS }),
      (err: unknown) => resultCallback({ code: ExportResultCode.FAILED, error: err as Error }),
    );
  }

  async shutdown(): Promise<void> {}
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
