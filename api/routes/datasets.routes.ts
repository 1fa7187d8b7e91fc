import type { Context, Next } from 'koa';
import type { AppDeps } from '../deps.js';
import { AppError, STATUS_MESSAGES } from '../../core/errors.js';
import { DatasetsRepository } from '../../core/repositories/datasets.repository.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import { readRawBody } from '../http/raw-body.js';
import type { Validated } from '../middleware/validate.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/datasets.schemas.js';
import { rowsFromJsonLines } from '../services/dataset-lines.js';
import { DatasetsService } from '../services/datasets.service.js';

type Id = { id: string };
type RowId = { id: string; row_id: string };
type ProjectQ = { project_id: string };
type ScopeQ = { project_id?: string };

const LIMITS =
  `At most ${s.MAX_ROWS_PER_UPLOAD} rows per request and ${s.MAX_ROW_BYTES} bytes of JSON per row (400 naming the row); ` +
  'the whole body at most MAX_BODY_BYTES (413).';

/**
 * Rows come as JSON `{rows: [...]}` (parsed by the body reader) or as JSON
 * lines, read and checked here line by line (a bad line is a 400 naming it)
 * and handed on as `{rows}`; other content types are 415.
 */
function rowsBody(maxBytes: number) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const type = ctx.request.is('application/json', ...s.JSONL_TYPES);
    if (type === false)
      throw new AppError(415, STATUS_MESSAGES[415]!, {
        field: 'content-type',
        reason: `rows are sent as application/json {"rows": [...]} or as JSON lines (${s.JSONL_TYPES.join(', ')}), not ${ctx.get('content-type')}`,
      });
    if (type !== null && type !== 'application/json')
      ctx.request.body = { rows: rowsFromJsonLines(await readRawBody(ctx, maxBytes)) };
    await next();
  };
}

export function datasetRoutes(deps: AppDeps): ApiRouter {
  const datasets = new DatasetsService(new DatasetsRepository(deps.db));
  return new ApiRouter('/api/agent-server/datasets', 'Datasets')
    .access({ read: 'project:read', write: 'project:develop', project: { table: 'datasets' } })
    .route<Validated<never, ProjectQ, s.DatasetCreateBody>>(
      {
        method: 'post',
        path: '/',
        summary: 'Create a dataset, optionally with its first rows',
        description:
          'Rows for evaluations: each an `input` (a user message, as converse takes it), an optional `context` ' +
          '(template variables) and an optional `expected_output` (text or any JSON). Names are unique per project (409). ' +
          LIMITS,
        request: s.datasetCreate,
        response: s.datasetResponse,
      },
      async (ctx, { query, body }) => ok(ctx, await datasets.create(query.project_id, body)),
    )
    .route<Validated<never, ProjectQ & Page>>(
      {
        method: 'get',
        path: '/',
        summary: "List a project's datasets, newest first, each with its row_count",
        request: s.datasetList,
        response: s.datasetListResponse,
      },
      async (ctx, { query }) => ok(ctx, await datasets.list(query.project_id, query)),
    )
    .route<Validated<Id, ScopeQ>>(
      {
        method: 'get',
        path: '/:id',
        summary: 'Get a dataset with its row_count',
        request: s.datasetGet,
        response: s.datasetResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await datasets.get(params.id, query.project_id)),
    )
    .route<Validated<Id, ScopeQ, s.DatasetUpdateBody>>(
      {
        method: 'patch',
        path: '/:id',
        summary: 'Rename a dataset or change its description (rows are added and deleted on their own)',
        request: s.datasetUpdate,
        response: s.datasetResponse,
      },
      async (ctx, { params, query, body }) =>
        ok(ctx, await datasets.update(params.id, query.project_id, body)),
    )
    .route<Validated<Id, ScopeQ>>(
      {
        method: 'delete',
        path: '/:id',
        summary: 'Delete a dataset and all its rows',
        request: s.datasetDelete,
      },
      async (ctx, { params, query }) => {
        await datasets.delete(params.id, query.project_id);
        ok(ctx, {});
      },
    )
    .route<Validated<Id, ScopeQ, s.DatasetRowsBody>>(
      {
        method: 'post',
        path: '/:id/rows',
        summary: 'Add rows to a dataset, all or none',
        description:
          'JSON `{rows: [...]}`, or JSON lines (`Content-Type: application/x-ndjson` or `application/jsonl`): one row ' +
          'object per line, blank lines skipped. Any bad row is a 400 naming it (`rows.<index>.<field>`, or ' +
          '`line <n>.<field>` for JSON lines, counting from 1) and nothing is written. ' +
          LIMITS,
        request: s.datasetRowsAdd,
        response: s.datasetRowsAddResponse,
        consumes: s.JSONL_TYPES,
      },
      async (ctx, { params, query, body }) =>
        ok(ctx, await datasets.addRows(params.id, query.project_id, body.rows)),
      rowsBody(deps.config.maxBodyBytes),
    )
    .route<Validated<Id, ScopeQ & Page>>(
      {
        method: 'get',
        path: '/:id/rows',
        summary: "List a dataset's rows in the order they were added (limit and offset)",
        request: s.datasetRowsList,
        response: s.datasetRowListResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await datasets.listRows(params.id, query.project_id, query)),
    )
    .route<Validated<RowId, ScopeQ>>(
      {
        method: 'delete',
        path: '/:id/rows/:row_id',
        summary: 'Delete one row of a dataset',
        request: s.datasetRowDelete,
      },
      async (ctx, { params, query }) => {
        await datasets.deleteRow(params.id, query.project_id, params.row_id);
        ok(ctx, {});
      },
    );
}
