import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import { SchemasRepository } from '../../core/repositories/schemas.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/schemas.schemas.js';
import { SchemasService } from '../services/schemas.service.js';

type Id = { id: string };
type ProjectQ = { project_id: string };
type ScopeQ = { project_id?: string };

export function schemaRoutes(deps: AppDeps): ApiRouter {
  const schemas = new SchemasService(new SchemasRepository(deps.db));
  return new ApiRouter('/api/agent-server/schemas', 'Schemas')
    .access({ read: 'project:read', write: 'project:develop', project: { table: 'schemas' } })
    .route<Validated<never, ProjectQ, s.SchemaCreateBody>>(
      {
        method: 'post',
        path: '/',
        summary: 'Create a JSON schema',
        description:
          '`schema` must compile as JSON Schema draft 2020-12; otherwise 400 with the compiler message.',
        request: s.schemaCreate,
        response: s.schemaResponse,
      },
      async (ctx, { query, body }) => ok(ctx, await schemas.create(query.project_id, body)),
    )
    .route<Validated<never, ProjectQ & Page>>(
      {
        method: 'get',
        path: '/',
        summary: "List a project's schemas, newest first",
        request: s.schemaList,
        response: s.schemaListResponse,
      },
      async (ctx, { query }) => ok(ctx, await schemas.list(query.project_id, query)),
    )
    .route<Validated<Id, ScopeQ>>(
      {
        method: 'get',
        path: '/:id',
        summary: 'Get a schema',
        request: s.schemaGet,
        response: s.schemaResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await schemas.get(params.id, query.project_id)),
    )
    .route<Validated<Id, ScopeQ, s.SchemaUpdateBody>>(
      {
        method: 'patch',
        path: '/:id',
        summary: 'Update a schema',
        request: s.schemaUpdate,
        response: s.schemaResponse,
      },
      async (ctx, { params, query, body }) =>
        ok(ctx, await schemas.update(params.id, query.project_id, body)),
    )
    .route<Validated<Id, ScopeQ>>(
      {
        method: 'delete',
        path: '/:id',
        summary: 'Delete a schema',
        description: 'Refused with 409 while an agent refers to the schema.',
        request: s.schemaDelete,
      },
      async (ctx, { params, query }) => {
        await schemas.delete(params.id, query.project_id);
        ok(ctx, {});
      },
    );
}
