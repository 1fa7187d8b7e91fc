import { Readable } from 'node:stream';
import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/audit-events.schemas.js';
import { AuditEventsService } from '../services/audit-events.service.js';

const WHO_MAY_READ =
  'Organisation owners and admins read every row; a project admin reads the rows of a project it administers, ' +
  'naming it in `project_id`.';

export function auditEventRoutes(deps: AppDeps): ApiRouter {
  const events = new AuditEventsService(deps.db);
  // project:admin: with no project_id named, only the organisation role gives it (core/auth/roles.ts).
  return new ApiRouter('/api/agent-server/audit-events', 'Audit')
    .access({ read: 'project:admin', write: 'project:admin' })
    .route<Validated<never, s.AuditEventQuery & Page>>(
      {
        method: 'get',
        path: '/',
        summary: 'List audit events, newest first',
        description:
          'Every change made through the API (who, when, what, from where, the fields before and after with ' +
          'secrets left out), every change refused (`<action>.denied`), every use of ADMIN_TOKEN in users mode, ' +
          `logins and tokens (docs/audit-log.md). ${WHO_MAY_READ}`,
        request: s.auditEventList,
        response: s.auditEventListResponse,
      },
      async (ctx, { query: { limit, offset, ...filter } }) =>
        ok(ctx, await events.list(filter, { limit, offset })),
    )
    .route<Validated<never, s.AuditEventQuery>>(
      {
        method: 'get',
        path: '/export',
        summary: 'Export audit events as JSON lines',
        description: `The rows the same filters list, every one (no limit), one JSON object per line, newest first. ${WHO_MAY_READ}`,
        request: s.auditEventExport,
        produces: 'application/x-ndjson',
      },
      (ctx, { query }) => {
        ctx.type = 'application/x-ndjson';
        ctx.set('content-disposition', 'attachment; filename="audit-events.jsonl"');
        ctx.body = Readable.from(events.exportLines(query));
      },
    );
}
