/**
 * One structured line per request (logging.ts): method, path without its
 * query, status, duration and the caller's trace id. Never bodies, commands
 * or env values.
 */
import type { IncomingMessage } from 'node:http';
import type { Logger } from '../logging.js';

/** Starts timing the request; the returned function writes its line. */
export function startRequestLog(logger: Logger, req: IncomingMessage): (status: number) => void {
  const started = performance.now();
  // W3C traceparent `00-<trace id>-<span id>-<flags>`: the trace id ties this log line to the caller's trace.
  const traceId = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/.exec(
    String(req.headers.traceparent ?? ''),
  )?.[1];
  return (status) =>
    logger.info('request', {
      method: req.method,
      path: (req.url ?? '').split('?')[0],
      status,
      duration_ms: Math.round(performance.now() - started),
      ...(traceId ? { trace_id: traceId } : {}),
    });
}
