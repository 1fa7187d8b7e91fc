import { once } from 'node:events';
import type { Context } from 'koa';
import { openEventStream } from '../http/sse.js';
import type { OpenedStream } from './calls.js';
import type { Surface } from './surface.js';
import { toGatewayError } from './upstream.js';

export interface StreamResult {
  status: number;
  error?: string;
}

/**
 * Writes an opened stream to the caller as it arrives: headers at once, each
 * chunk flushed when produced, backpressure honoured (a slow caller slows the
 * upstream read instead of growing a buffer). A break becomes the surface's
 * error event and the stream ends with no success terminator. A caller that
 * goes away aborts `controller`, which cancels the upstream request.
 */
export async function writeStream(
  ctx: Context,
  surface: Surface,
  body: Record<string, unknown>,
  opened: OpenedStream,
  controller: AbortController,
  beforeEnd: () => Promise<void> = () => Promise.resolve(),
): Promise<StreamResult> {
  const res = openEventStream(ctx);
  // The answer's closing chunks wait for `beforeEnd` (the usage row written): a
  // caller that saw its stream complete is a call whose usage is stored.
  const held: string[] = [];
  try {
    for await (const text of opened.chunks) {
      if (opened.finished()) held.push(text);
      else if (!res.write(text)) await once(res, 'drain', { signal: controller.signal });
    }
    await beforeEnd();
    res.end(held.join(''));
    return { status: 200 };
  } catch (err) {
    if (controller.signal.aborted) {
      res.destroy();
      return { status: 499, error: 'client disconnected' };
    }
    const gerr = toGatewayError(err);
    res.end(surface.createStreamRenderer(body).error(gerr));
    return { status: gerr.status, error: gerr.message };
  }
}
