/**
 * GET /health: answered before authentication, and not counted as activity
 * (a polling orchestrator must not keep an idle sandbox alive).
 */
import type { IncomingMessage } from 'node:http';
import type { HealthResponse } from '../contracts.js';
import type { IdleTracker } from '../idle.js';
import type { RouteResult } from '../http/respond.js';
import type { PoolClaim } from './claim.js';

export const DAEMON_VERSION = '1';

/** Only the exact path, GET or HEAD; anything else goes through authentication and the router. */
export function isHealthCheck(req: IncomingMessage): boolean {
  return req.url === '/health' && (req.method === 'GET' || req.method === 'HEAD');
}

export function health(idle: IdleTracker, pool: PoolClaim): RouteResult {
  const state = pool.state();
  const body: HealthResponse = {
    status: 'ok',
    version: DAEMON_VERSION,
    running: idle.requests,
    idle_ms: idle.idleMs(),
    ...(state ? { pool: state } : {}),
  };
  return { statusCode: 200, body };
}
