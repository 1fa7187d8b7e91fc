import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/crons.schemas.js';
import { CronsService, toCronView } from '../services/crons.service.js';
import { requireProject } from '../services/project-scope.js';

type Id = { id: string };
type ScopeQ = { project_id?: string };
type ListQ = { project_id: string; agent_id?: string } & Page;

/**
 * Crons as our API shows them: made through the Agent Protocol door
 * (`/api/langgraph/{project_id}/runs/crons`), listed, paused, resumed and
 * deleted here.
 */
export function cronRoutes(deps: AppDeps): ApiRouter {
  const crons = new CronsService(deps);
  const view = (row: Parameters<typeof toCronView>[0]) => toCronView(row, deps.config);
  return new ApiRouter('/api/agent-server/crons', 'Crons')
    .access({ read: 'project:read', write: 'project:develop', project: { table: 'crons' } })
    .route<Validated<never, ListQ>>(
      {
        method: 'get',
        path: '/',
        summary: "List a project's crons, newest first",
        request: s.cronList,
        response: s.cronListResponse,
      },
      async (ctx, { query }) => {
        await requireProject(deps.db, query.project_id);
        const rows = await crons.search(
          { projectId: query.project_id, ...(query.agent_id ? { agentId: query.agent_id } : {}) },
          query,
          { by: 'created_at', order: 'desc' },
        );
        ok(ctx, rows.map(view));
      },
    )
    .route<Validated<Id, ScopeQ>>(
      { method: 'get', path: '/:id', summary: 'Get a cron', request: s.cronById, response: s.cronResponse },
      async (ctx, { params, query }) => ok(ctx, view(await crons.find(params.id, query.project_id))),
    )
    .route<Validated<Id, ScopeQ>>(
      {
        method: 'post',
        path: '/:id/pause',
        summary: 'Pause a cron (its schedule takes no action until resumed)',
        request: s.cronById,
        response: s.cronResponse,
      },
      async (ctx, { params, query }) =>
        ok(ctx, view(await crons.setPaused(params.id, query.project_id, true))),
    )
    .route<Validated<Id, ScopeQ>>(
      {
        method: 'post',
        path: '/:id/resume',
        summary: 'Resume a paused cron',
        request: s.cronById,
        response: s.cronResponse,
      },
      async (ctx, { params, query }) =>
        ok(ctx, view(await crons.setPaused(params.id, query.project_id, false))),
    )
    .route<Validated<Id, ScopeQ>>(
      {
        method: 'delete',
        path: '/:id',
        summary: 'Delete a cron and its schedule',
        request: s.cronById,
      },
      async (ctx, { params, query }) => {
        await crons.delete(params.id, query.project_id);
        ok(ctx, {});
      },
    );
}
