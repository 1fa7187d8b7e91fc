import Router from '@koa/router';
import type { AppDeps } from '../deps.js';
import { ok } from '../http/envelope.js';
import { validate, type Validated } from '../middleware/validate.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/projects.schemas.js';

const input = <T = Validated>(state: { input?: unknown }) => state.input as T;

export function projectRoutes({ services }: AppDeps): Router {
  const router = new Router({ prefix: '/api/agent-server/projects' });
  const projects = services.projects;

  router.post('/', validate(s.projectCreate), async (ctx) => {
    ok(ctx, await projects.create(input<Validated<never, never, s.ProjectCreateBody>>(ctx.state).body));
  });
  router.get('/', validate(s.projectList), async (ctx) => {
    ok(ctx, await projects.list(input<Validated<never, Page>>(ctx.state).query));
  });
  router.get('/:id', validate(s.projectGet), async (ctx) => {
    ok(ctx, await projects.get(input<Validated>(ctx.state).params.id!));
  });
  router.patch('/:id', validate(s.projectUpdate), async (ctx) => {
    const { params, body } = input<Validated<{ id: string }, never, s.ProjectUpdateBody>>(ctx.state);
    ok(ctx, await projects.update(params.id, body));
  });
  router.delete('/:id', validate(s.projectDelete), async (ctx) => {
    await projects.delete(input<Validated>(ctx.state).params.id!);
    ok(ctx, {});
  });

  return router;
}
