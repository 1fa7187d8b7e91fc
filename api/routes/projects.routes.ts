import type { AppDeps } from '../deps.js';
import { visibleProjects } from '../../core/auth/principal.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import { ProjectsRepository } from '../../core/repositories/projects.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/projects.schemas.js';
import { ProjectsService } from '../services/projects.service.js';

type Id = { id: string };

export function projectRoutes(deps: AppDeps): ApiRouter {
  const projects = new ProjectsService(new ProjectsRepository(deps.db));
  return new ApiRouter('/api/agent-server/projects', 'Projects')
    .access({
      read: 'project:read',
      write: 'project:admin',
      project: { table: 'projects', projectColumn: 'id' },
    })
    .route<Validated<never, never, s.ProjectCreateBody>>(
      {
        method: 'post',
        path: '/',
        permission: 'org:admin',
        summary: 'Create a project',
        request: s.projectCreate,
        response: s.projectResponse,
      },
      async (ctx, { body }) => ok(ctx, await projects.create(body)),
    )
    .route<Validated<never, Page>>(
      {
        method: 'get',
        path: '/',
        permission: 'signed-in',
        summary: 'List projects, newest first',
        request: s.projectList,
        response: s.projectListResponse,
      },
      async (ctx, { query }) => ok(ctx, await projects.list(query, visibleProjects(ctx.state.principal))),
    )
    .route<Validated<Id>>(
      {
        method: 'get',
        path: '/:id',
        summary: 'Get a project',
        request: s.projectGet,
        response: s.projectResponse,
      },
      async (ctx, { params }) => ok(ctx, await projects.get(params.id)),
    )
    .route<Validated<Id, never, s.ProjectUpdateBody>>(
      {
        method: 'patch',
        path: '/:id',
        summary: 'Update a project',
        request: s.projectUpdate,
        response: s.projectResponse,
      },
      async (ctx, { params, body }) => ok(ctx, await projects.update(params.id, body)),
    )
    .route<Validated<Id>>(
      { method: 'delete', path: '/:id', summary: 'Delete a project', request: s.projectDelete },
      async (ctx, { params }) => {
        await projects.delete(params.id);
        ok(ctx, {});
      },
    );
}
