import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';

/**
 * Takes the response over from Koa and sends Server-Sent Events headers at
 * once (no proxy buffering), so the first event reaches the client as soon
 * as it is written. The caller writes events and ends the response.
 */
export function openEventStream(ctx: Context, headers: Record<string, string> = {}): ServerResponse {
  const res = ctx.res;
  ctx.status = 200;
  ctx.respond = false;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    ...headers,
  });
  res.flushHeaders();
  return res;
}
