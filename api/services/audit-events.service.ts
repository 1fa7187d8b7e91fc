import {
  allAuditEvents,
  listAuditEvents,
  type AuditEvent,
  type AuditFilter,
} from '../../core/audit/audit-events.js';
import type { Db } from '../../core/db/knex.js';
import type { Page } from '../schemas/common.schemas.js';

/** Reads of the audit log: a page, or every row as JSON lines. */
export class AuditEventsService {
  constructor(private readonly db: Db) {}

  list(filter: AuditFilter, page: Page): Promise<AuditEvent[]> {
    return listAuditEvents(this.db, filter, page);
  }

  /** One JSON object per line, newest first, read from the database a page at a time as the client takes them. */
  async *exportLines(filter: AuditFilter): AsyncGenerator<string> {
    for await (const event of allAuditEvents(this.db, filter)) yield `${JSON.stringify(event)}\n`;
  }
}
