import { createRequire } from 'node:module';
import Joi from 'joi';
import type { AppDeps } from '../../deps.js';
import type { ApiRouter } from '../../http/api-router.js';
import type { Validated } from '../../middleware/validate.js';
import { projectParam, protocolRouter, requireProject, send } from './door.js';

const pkg = createRequire(import.meta.url)('../../../package.json') as { version: string };

/** What the protocol's clients ask first (Agent Chat UI checks `/info` before it connects). */
export function metaRoutes(deps: AppDeps): ApiRouter {
  const params = Joi.object({ ...projectParam });
  return protocolRouter()
    .route<Validated<{ project_id: string }>>(
      {
        method: 'get',
        path: '/info',
        summary: 'What this server offers of the Agent Protocol',
        request: { params },
      },
      async (ctx, { params: p }) => {
        await requireProject(deps.db, p.project_id);
        send(ctx, {
          version: pkg.version,
          context: 'js',
          flags: { assistants: true, crons: true, store: true, langsmith: false },
        });
      },
    )
    .route<Validated<{ project_id: string }>>(
      { method: 'get', path: '/ok', summary: 'Liveness, as the protocol asks it', request: { params } },
      (ctx) => send(ctx, { ok: true }),
    );
}
