import type { Context } from 'koa';
import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { actorOf } from '../http/actor.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import { PromptsRepository } from '../../core/repositories/prompts.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/prompts.schemas.js';
import { PromptsService } from '../services/prompts.service.js';

type ProjectQ = { project_id: string };

export function promptRoutes(deps: AppDeps): ApiRouter {
  const prompts = new PromptsService(new PromptsRepository(deps.db));
  // Who moved a label: the signed-in user or token in users mode, else the credential in use.
  const movedBy = (ctx: Context) => ctx.state.principal?.name ?? actorOf(deps.config);
  return (
    new ApiRouter('/api/agent-server/prompts', 'Prompts')
      .access({
        read: 'project:read',
        write: 'project:develop',
        project: { table: 'prompts', param: 'name', column: 'name' },
      })
      .route<Validated<never, ProjectQ, s.PromptCreateBody>>(
        {
          method: 'post',
          path: '/',
          summary: 'Create a prompt with its first version',
          description:
            'Version 1 gets the `latest` label, and `production` too when `label` asks for it (kept in the label history).',
          request: s.promptCreate,
          response: s.promptResponse,
        },
        async (ctx, { query, body }) => ok(ctx, await prompts.create(query.project_id, body, movedBy(ctx))),
      )
      .route<Validated<never, ProjectQ & Page>>(
        {
          method: 'get',
          path: '/',
          summary: "List a project's prompts with their latest version, newest first",
          request: s.promptList,
          response: s.promptListResponse,
        },
        async (ctx, { query }) => ok(ctx, await prompts.list(query.project_id, query)),
      )
      // Registered before the `/:name/...` routes so "by-name" is never taken for a prompt name.
      .route<Validated<never, s.ScopeQuery & { name: string }>>(
        {
          method: 'get',
          path: '/by-name',
          summary: 'Get a prompt by name',
          description:
            'Without `project_id` the name must be unique across projects (else 400 naming `project_id`).',
          request: s.promptByName,
          response: s.promptResponse,
        },
        async (ctx, { query }) => ok(ctx, await prompts.getByName(query.name, query.project_id)),
      )
      .route<Validated<s.NameParams, s.ScopeQuery>>(
        {
          method: 'delete',
          path: '/:name',
          summary: 'Delete a prompt and its versions',
          description: 'Refused with 409 while an agent refers to the prompt.',
          request: s.promptDelete,
        },
        async (ctx, { params, query }) => {
          await prompts.delete(params.name, query.project_id);
          ok(ctx, {});
        },
      )
      .route<Validated<s.NameParams, s.ScopeQuery, s.VersionCreateBody>>(
        {
          method: 'post',
          path: '/:name/versions',
          summary: 'Add the next version of a prompt',
          description:
            'The new version takes the `latest` label; `production` moves only when `label` asks for it ' +
            '(kept in the label history).',
          request: s.versionCreate,
          response: s.versionResponse,
        },
        async (ctx, { params, query, body }) =>
          ok(ctx, await prompts.addVersion(params.name, query.project_id, body, movedBy(ctx))),
      )
      .route<Validated<s.NameParams, s.ScopeQuery & Page>>(
        {
          method: 'get',
          path: '/:name/versions',
          summary: "List a prompt's versions, newest first",
          request: s.versionList,
          response: s.versionListResponse,
        },
        async (ctx, { params, query }) =>
          ok(ctx, await prompts.listVersions(params.name, query.project_id, query)),
      )
      .route<Validated<s.VersionParams, s.ScopeQuery>>(
        {
          method: 'get',
          path: '/:name/versions/:version',
          summary: 'Get a prompt version by version number',
          request: s.versionGet,
          response: s.versionResponse,
        },
        async (ctx, { params, query }) =>
          ok(ctx, await prompts.getVersion(params.name, query.project_id, params.version)),
      )
      .route<Validated<s.VersionParams, s.ScopeQuery, s.VersionUpdateBody>>(
        {
          method: 'patch',
          path: '/:name/versions/:version',
          summary: 'Move a label onto a prompt version',
          description:
            '`production` moves when assigned, and the move is kept in the label history; `latest` can only be ' +
            '(re)assigned to the newest version.',
          request: s.versionUpdate,
          response: s.versionResponse,
        },
        async (ctx, { params, query, body }) =>
          ok(ctx, await prompts.setLabel(params.name, query.project_id, params.version, body, movedBy(ctx))),
      )
      .route<Validated<s.NameParams, s.ScopeQuery & Page>>(
        {
          method: 'get',
          path: '/:name/label-history',
          summary:
            "A prompt's label moves: who moved which label, when, from which version to which; newest first",
          description:
            'Every assignment that moved a label, written with the move itself (on create, on a new version ' +
            'and on `PATCH …/versions/{version}`); assigning a label to the version that holds it is no move. `latest` following each new version is not recorded: the versions list tells it. `moved_by` names the credential in use. Gone with the prompt.',
          request: s.labelHistory,
          response: s.labelHistoryResponse,
        },
        async (ctx, { params, query }) =>
          ok(ctx, await prompts.labelHistory(params.name, query.project_id, query)),
      )
  );
}
