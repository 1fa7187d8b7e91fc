import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from '../../core/logger.js';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives each request an id (the caller's X-Request-Id when it is sane), a child
 * logger carrying it, and one log line when the response is done.
 */
export function requestContext(logger: Logger) {
  return async function requestContextMiddleware(ctx: Context, next: Next): Promise<void> {
    const incoming = ctx.get('x-request-id');
    const requestId = SAFE_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    // A child logger costs an allocation and bindings serialisation: make it on first use.
    let child: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', {
      get: () => (child ??= logger.child({ request_id: requestId })),
      enumerable: true,
      configurable: true,
    });
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      if (logger.isLevelEnabled('info')) {
        ctx.state.log.info(
          {
            method: ctx.method,
            path: ctx.path,
            route: ctx._matchedRoute,
            status: ctx.status,
            duration_ms: Math.round((performance.now() - started) * 100) / 100,
          },
          'request',
        );
      }
    }
  };
}
