/**
 * Writing what the router returned, or an error, to the socket. Errors become
 * `{error: {code, message}}`; anything that is not a DaemonError is a 500
 * without internals (or a 403 for a permission problem inside the root).
 */
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { DaemonError } from '../errors.js';
import type { Logger } from '../logging.js';

/** What a route answers: a JSON body, or a byte stream (file reads). */
export type RouteResult =
  | { statusCode: number; body: unknown }
  | { statusCode: number; stream: Readable; size: number; contentType: string };

export function send(res: ServerResponse, result: RouteResult, head: boolean): void {
  if ('body' in result) {
    const body = JSON.stringify(result.body);
    res.writeHead(result.statusCode, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(head ? undefined : body);
    return;
  }
  res.writeHead(result.statusCode, { 'content-type': result.contentType, 'content-length': result.size });
  if (head) {
    result.stream.destroy();
    res.end();
    return;
  }
  result.stream.on('error', () => res.destroy());
  result.stream.pipe(res);
}

/** Answers with the error (or drops the connection when the answer had begun); returns the status. */
export function sendError(res: ServerResponse, err: unknown, logger: Logger): number {
  const known = err instanceof DaemonError;
  const errno = (err as NodeJS.ErrnoException).code;
  // Permission problems inside the root are the caller's to fix, not a daemon fault.
  const status = known ? err.status : errno === 'EACCES' || errno === 'EPERM' ? 403 : 500;
  const code = known ? err.code : status === 403 ? 'forbidden' : 'internal';
  const message = known ? err.message : status === 403 ? 'permission denied' : 'internal error';
  if (!known && status === 500) logger.error('unhandled error', { error: (err as Error).message });
  if (res.headersSent) {
    res.destroy();
    return status;
  }
  const body = JSON.stringify({ error: { code, message } });
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  res.end(body);
  return status;
}
