/**
 * The router: maps an authenticated request to its handler and returns what
 * to send (`{statusCode, body}` or a byte stream), never touching the socket
 * itself. Authentication, /health, activity and logs are in
 * http/request-handler.ts.
 */
import type { IncomingMessage } from 'node:http';
import { DaemonError, MethodNotAllowedError } from './errors.js';
import { cancelExecRoute, execRoute, type ExecDeps } from './handlers/exec.js';
import { filesRoute } from './handlers/files.js';
import { CLAIM_MAX_BYTES, readJson } from './http/body.js';
import type { RouteResult } from './http/respond.js';

export interface RouteDeps extends ExecDeps {
  /** POST /claim: a pool sandbox takes its session's token and idle timeout (handlers/claim.ts). */
  claim: (body: unknown) => unknown;
}

export async function route(req: IncomingMessage, deps: RouteDeps): Promise<RouteResult> {
  const url = req.url ?? '/';
  const queryAt = url.indexOf('?');
  // Keep the raw (still percent-encoded) path: decoding happens once, in the path guard.
  const rawPath = queryAt === -1 ? url : url.slice(0, queryAt);
  const query = new URLSearchParams(queryAt === -1 ? '' : url.slice(queryAt + 1));
  const method = req.method ?? 'GET';

  if (rawPath === '/exec/bash' || rawPath === '/exec/python') {
    if (method !== 'POST') throw new MethodNotAllowedError('POST');
    return execRoute(req, rawPath === '/exec/bash' ? 'bash' : 'python', deps);
  }
  if (rawPath === '/exec/cancel') {
    if (method !== 'POST') throw new MethodNotAllowedError('POST');
    return cancelExecRoute(req, deps);
  }
  if (rawPath === '/claim') {
    if (method !== 'POST') throw new MethodNotAllowedError('POST');
    return { statusCode: 200, body: deps.claim(await readJson(req, CLAIM_MAX_BYTES)) };
  }
  if (rawPath === '/files' || rawPath.startsWith('/files/'))
    return filesRoute(req, rawPath, query, deps.config);
  throw new DaemonError(404, 'not_found', `no route for ${method} ${rawPath}`);
}
