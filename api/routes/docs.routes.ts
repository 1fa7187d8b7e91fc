import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import Joi from 'joi';
import { ApiRouter, type RegisteredRoute } from '../http/api-router.js';
import { NotFoundError } from '../../core/errors.js';
import { buildOpenApi } from '../openapi/openapi.js';

const require = createRequire(import.meta.url);
const pkg = require('../../package.json') as { version: string };
const swaggerDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-32x32.png',
]);

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Agent Gateway Service — API</title>
<link rel="stylesheet" href="/api/agent-server/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/api/agent-server/docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/api/agent-server/openapi.json', dom_id: '#ui' });</script>
</body></html>`;

/** `openapi.json` (generated from the routes' joi schemas) and a docs page served from swagger-ui-dist. */
export function docsRoutes(documented: () => RegisteredRoute[]): ApiRouter {
  let doc: unknown;
  const router = new ApiRouter('/api/agent-server', 'Health').access({ read: 'public', write: 'public' });
  router
    .route(
      {
        method: 'get',
        public: true,
        path: '/openapi.json',
        summary: 'This OpenAPI 3.1 document',
        produces: 'application/json',
      },
      (ctx) => {
        doc ??= buildOpenApi(documented(), { version: pkg.version });
        ctx.body = doc;
      },
    )
    .route(
      {
        method: 'get',
        public: true,
        path: '/docs',
        summary: 'Human-readable API documentation',
        produces: 'text/html',
      },
      (ctx) => {
        ctx.type = 'html';
        ctx.body = PAGE;
      },
    )
    .route(
      {
        method: 'get',
        public: true,
        path: '/docs/assets/:file',
        summary: 'Static assets of the docs page',
        produces: 'application/octet-stream',
        request: { params: Joi.object({ file: Joi.string().max(100).required() }) },
      },
      async (ctx, { params }: { params: { file: string } }) => {
        if (!ASSETS.has(params.file)) throw new NotFoundError();
        ctx.type = path.extname(params.file);
        ctx.set('Cache-Control', 'public, max-age=86400');
        ctx.body = await readFile(path.join(swaggerDir, params.file));
      },
    );
  return router;
}
