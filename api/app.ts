import path from 'node:path';
import Koa from 'koa';
import type { AppDeps } from './deps.js';
import { errorHandler } from './middleware/error-handler.js';
import { hostCheck } from './middleware/host-check.js';
import { agentProtocolCors } from './protocols/langgraph/cors.js';
import { requestContext } from './middleware/request-id.js';
import { tracing } from './middleware/tracing.js';
import { httpMetrics } from './middleware/metrics.js';
import { adminMayScrape } from './http/authenticate.js';
import { currentTelemetry } from '../core/telemetry/telemetry.js';
import { ApiRouter } from './http/api-router.js';
import { BodyReader, requestBodies } from './http/body-reader.js';
import { serveConsole } from './http/console.js';
import { buildRouters } from './routes/index.js';
import { gatewayRouter } from './gateway/gateway.router.js';

/** The web console's build output (npm run build:console). */
const CONSOLE_DIST = path.resolve(import.meta.dirname, '../console/dist');

/** Builds the Koa application. It never listens: server.ts does. */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true; // the error handler logs; Koa's default stderr dump would duplicate it

  // Before tracing: GET /metrics is answered untraced and uncounted; every other request is timed.
  const access = { config: deps.config, db: deps.db };
  const usersMode = deps.config.auth.mode === 'users';
  if (deps.config.metrics.enabled)
    app.use(httpMetrics(deps.config, usersMode ? adminMayScrape(access) : undefined));
  app.use(tracing(currentTelemetry()));
  app.use(requestContext(deps.logger));
  // Reads nothing: each route reads its body once matched and its caller authenticated. Outside the
  // error handler, so whatever answer a request gets, the rest of a body nobody read is discarded.
  app.use(
    requestBodies(
      new BodyReader({
        maxBytes: deps.config.maxBodyBytes,
        inFlightMax: deps.config.http.bodyBytesInFlightMax,
        idleTimeoutMs: deps.config.http.bodyIdleTimeoutMs,
      }),
    ),
  );
  app.use(errorHandler());
  // Before anything reads the request: a foreign Host is a 421, a foreign Origin changing configuration a 403.
  app.use(hostCheck(deps.config.allowedHosts, deps.config.agentProtocolCorsOrigins));
  // CORS for the Agent Protocol door's allowed origins (none by default): preflights end here.
  app.use(agentProtocolCors(deps.config.agentProtocolCorsOrigins));

  app.use(serveConsole(CONSOLE_DIST));
  app.use(gatewayRouter(deps).routes());
  const routers = buildRouters(deps);
  const router = ApiRouter.mountAll(routers, { adminToken: deps.config.adminToken, access });
  app.use(router.routes());
  for (const mw of ApiRouter.allowedMethods(routers, router, deps.config.adminToken, access)) app.use(mw);
  return app;
}
