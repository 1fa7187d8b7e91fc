/**
 * One request from start to end: /health first (no token, not activity),
 * then activity tracking and the request's log line, bearer authentication,
 * the router, and writing its answer or error.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isHealthCheck } from '../handlers/health.js';
import type { IdleTracker } from '../idle.js';
import type { Logger } from '../logging.js';
import { InvalidTokenError } from '../errors.js';
import type { BearerAuth } from './auth.js';
import { startRequestLog } from './request-log.js';
import { send, sendError, type RouteResult } from './respond.js';

export interface RequestHandlerDeps {
  auth: BearerAuth;
  idle: IdleTracker;
  logger: Logger;
  health: () => RouteResult;
  route: (req: IncomingMessage) => Promise<RouteResult>;
}

export function createRequestHandler(deps: RequestHandlerDeps) {
  const { auth, idle, logger } = deps;
  return function handleRequest(req: IncomingMessage, res: ServerResponse): void {
    const head = req.method === 'HEAD';
    if (isHealthCheck(req)) {
      send(res, deps.health(), head);
      return;
    }
    const logLine = startRequestLog(logger, req);
    idle.requestStarted();
    let status = 200;
    res.once('close', () => {
      idle.requestEnded();
      logLine(status);
    });
    if (!auth.authorized(req)) {
      status = sendError(res, new InvalidTokenError(), logger);
      req.resume();
      return;
    }
    deps.route(req).then(
      (result) => {
        status = result.statusCode;
        send(res, result, head);
      },
      (err: unknown) => {
        status = sendError(res, err, logger);
        req.resume();
      },
    );
  };
}
