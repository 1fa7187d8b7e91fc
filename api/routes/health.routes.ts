import Router from '@koa/router';
import type { AppDeps } from '../deps.js';
import { ServiceUnavailableError } from '../errors.js';
import { ok } from '../http/envelope.js';

interface CheckResult {
  ok: boolean;
  latency_ms: number;
  error?: string;
}

async function timed(fn: () => Promise<unknown>, timeoutMs: number): Promise<CheckResult> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, latency_ms: Math.round(performance.now() - started) };
  } catch (err) {
    // The reason is an operator's aid (connection refused, timeout); it carries no secrets.
    const e = err as { code?: string; message?: string };
    return {
      ok: false,
      latency_ms: Math.round(performance.now() - started),
      error: e.code ?? e.message ?? 'unavailable',
    };
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoutes(deps: AppDeps): Router {
  const router = new Router({ prefix: '/api/agent-server/health' });

  router.get('/', (ctx) => ok(ctx, { status: 'ok' }));

  router.get('/ready', async (ctx) => {
    const [postgres, temporal] = await Promise.all([
      timed(() => deps.db.raw('select 1'), 2_000),
      timed(() => deps.temporal.check(2_000), 2_500),
    ]);
    const checks = { postgres, temporal };
    const down = Object.entries(checks)
      .filter(([, c]) => !c.ok)
      .map(([name]) => name);
    if (down.length > 0) throw new ServiceUnavailableError({ down, checks });
    ok(ctx, { status: 'ready', checks });
  });

  return router;
}
