import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import { ModelsRepository } from '../../core/repositories/models.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/models.schemas.js';
import { ModelsService } from '../services/models.service.js';

type Id = { id: string };
type ProjectId = { project_id: string };
type MaybeProjectId = { project_id?: string };

const PARAMETERS_NOTE =
  '`parameters` checks temperature (0–2), top_p (0–1), max_tokens (positive integer), presence_penalty and ' +
  'frequency_penalty (−2–2), stop (a string or up to 4 strings) and seed (integer); any other key is passed to ' +
  'the provider as-is. With `provider_id` the provider must exist and share `provider_type`; without it, calls ' +
  'go to the only provider of that type, and while several exist the model is refused (400 naming ' +
  '`provider_id` and the candidate providers, names and ids), on create and on any update that leaves it without one.';

export function modelRoutes(deps: AppDeps): ApiRouter {
  const models = new ModelsService(new ModelsRepository(deps.db), deps.db);
  return new ApiRouter('/api/agent-server/models', 'Models')
    .access({ read: 'project:read', write: 'project:admin', project: { table: 'models' } })
    .route<Validated<never, ProjectId, s.ModelCreateBody>>(
      {
        method: 'post',
        path: '/',
        summary: 'Create a model in a project',
        description: PARAMETERS_NOTE,
        request: s.modelCreate,
        response: s.modelResponse,
      },
      async (ctx, { query, body }) => ok(ctx, await models.create(query.project_id, body)),
    )
    .route<Validated<never, ProjectId & Page>>(
      {
        method: 'get',
        path: '/',
        summary: "List a project's models, newest first",
        request: s.modelList,
        response: s.modelListResponse,
      },
      async (ctx, { query }) => ok(ctx, await models.list(query.project_id, query)),
    )
    .route<Validated<Id, MaybeProjectId>>(
      {
        method: 'get',
        path: '/:id',
        summary: 'Get a model',
        request: s.modelGet,
        response: s.modelResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await models.get(params.id, query.project_id)),
    )
    .route<Validated<Id, MaybeProjectId, s.ModelUpdateBody>>(
      {
        method: 'patch',
        path: '/:id',
        summary: 'Update a model',
        description: `${PARAMETERS_NOTE} \`parameters\` and \`pricing\` are replaced whole; \`null\` clears \`pricing\` or \`provider_id\`.`,
        request: s.modelUpdate,
        response: s.modelResponse,
      },
      async (ctx, { params, query, body }) => ok(ctx, await models.update(params.id, query.project_id, body)),
    )
    .route<Validated<Id, MaybeProjectId>>(
      {
        method: 'delete',
        path: '/:id',
        summary: 'Delete a model',
        description:
          'A model an agent uses (as its model or its summarizer model) is a 409 naming the agents.',
        request: s.modelDelete,
      },
      async (ctx, { params, query }) => {
        await models.delete(params.id, query.project_id);
        ok(ctx, {});
      },
    );
}
