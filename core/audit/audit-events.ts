import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { deleteInChunks } from '../db/prune.js';
import type { DbAuditEvent } from '../db/tables/users.js';

/** One row of the audit log, as the API shows it: the table's row as it is. */
export type AuditEvent = DbAuditEvent;

/** What a list of the audit log is narrowed to; `action` ending in `*` is a prefix (`agent.*`). */
export interface AuditFilter {
  actor_id?: string;
  actor_type?: string;
  action?: string;
  resource_type?: string;
  resource_id?: string;
  project_id?: string;
  start_time?: Date;
  end_time?: Date;
}

/** `%`, `_` and `\` taken literally in a LIKE pattern. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

function filtered(db: Db, f: AuditFilter): Knex.QueryBuilder {
  const q = db('audit_events');
  for (const column of ['actor_id', 'actor_type', 'resource_type', 'resource_id', 'project_id'] as const) {
    const value = f[column];
    if (value !== undefined) q.where(column, value);
  }
  if (f.action?.endsWith('*')) q.where('action', 'like', `${likeLiteral(f.action.slice(0, -1))}%`);
  else if (f.action !== undefined) q.where('action', f.action);
  if (f.start_time) q.where('at', '>=', f.start_time);
  if (f.end_time) q.where('at', '<', f.end_time);
  return q;
}

/** A page of the audit log, newest first (ties broken by id, so pages never overlap). */
export function listAuditEvents(
  db: Db,
  f: AuditFilter,
  page: { limit: number; offset: number },
): Promise<AuditEvent[]> {
  return filtered(db, f)
    .orderBy([
      { column: 'at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(page.limit)
    .offset(page.offset)
    .select<AuditEvent[]>('*');
}

/**
 * Every row matching `f`, newest first, a page at a time: each page starts
 * below the last row of the one before (keyset, not offset), so rows written
 * while an export runs neither shift nor repeat what it sends.
 */
export async function* allAuditEvents(db: Db, f: AuditFilter, pageSize = 500): AsyncGenerator<AuditEvent> {
  // The cursor keeps `at` as Postgres's text: a Date would lose its microseconds, and rows with them.
  let last: { at_cursor: string; id: string } | undefined;
  for (;;) {
    const q = filtered(db, f);
    if (last) {
      const { at_cursor: at, id } = last;
      q.whereRaw('(at, id) < (?::timestamptz, ?::uuid)', [at, id]);
    }
    const rows = await q
      .orderBy([
        { column: 'at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(pageSize)
      .select<Array<AuditEvent & { at_cursor: string }>>('*', db.raw('at::text as at_cursor'));
    for (const { at_cursor: _cursor, ...row } of rows) yield row;
    if (rows.length < pageSize) return;
    last = rows.at(-1)!;
  }
}

/** Deletes rows older than `retentionDays`, in chunks, one replica at a time (AUDIT_RETENTION_DAYS). */
export function pruneAuditEvents(db: Db, retentionDays: number, chunk = 10_000): Promise<number> {
  const cutoff = new Date(Date.now() - retentionDays * 86_400_000);
  return deleteInChunks(
    db,
    'agent-server:prune-audit-events',
    `delete from audit_events where id in (select id from audit_events where at < ? limit ?)`,
    [cutoff],
    chunk,
  );
}
