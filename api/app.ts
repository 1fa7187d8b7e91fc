import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import type { AppDeps } from './deps.js';
import { adminAuth } from './middleware/admin-auth.js';
import { errorHandler } from './middleware/error-handler.js';
import { requestContext } from './middleware/request-id.js';
import { tracing } from './middleware/tracing.js';
import { currentTelemetry } from './telemetry/telemetry.js';
import { ApiRouter } from './http/api-router.js';
import { buildRouters } from './routes/index.js';
import { gatewayRouter } from './gateway/gateway.router.js';
import { meteredPolicy } from './gateway/metered-policy.js';

/** Builds the Koa application. It never listens: server.ts does. */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true; // the error handler logs; Koa's default stderr dump would duplicate it

  app.use(tracing(currentTelemetry()));
  app.use(requestContext(deps.logger));
  app.use(errorHandler());
  app.use(adminAuth(deps.config.adminToken));
  app.use(
    bodyParser({
      enableTypes: ['json'],
      jsonLimit: deps.config.maxBodyBytes,
      encoding: 'utf-8',
    }),
  );

  app.use(gatewayRouter(deps, { policy: meteredPolicy(deps.db, deps.usage) }).routes());
  const router = ApiRouter.mountAll(buildRouters(deps));
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: true }));
  return app;
}
