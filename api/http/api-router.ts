import Router from '@koa/router';
import type Joi from 'joi';
import type { Context, Middleware } from 'koa';
import { adminAuth } from '../middleware/admin-auth.js';
import { validate, type RequestSchemas, type Validated } from '../middleware/validate.js';
import { jsonBody } from './body-reader.js';

export type HttpMethod = 'get' | 'post' | 'patch' | 'put' | 'delete';

/** The methods whose requests carry a body (read after the route's guard, before its own middleware). */
const WITH_BODY = new Set<HttpMethod>(['post', 'patch', 'put']);

/** One documented route: what it validates is what the OpenAPI document shows. */
export interface RouteSpec {
  method: HttpMethod;
  /** Koa path relative to the router's prefix, e.g. `/:id`. */
  path: string;
  summary: string;
  description?: string;
  request?: RequestSchemas;
  /** Schema of the envelope's `data` on success. */
  response?: Joi.Schema;
  /** Non-JSON answers (SSE streams, raw bytes, HTML) are documented by content type. */
  produces?: string;
  /** Request bodies other than JSON (e.g. application/zip). */
  consumes?: string[];
  /** Open without ADMIN_TOKEN (health, the OpenAPI document, the docs page); every other route needs it when set. */
  public?: boolean;
}

/** How a door other than the configuration API differs: its own credential check and answer shapes. */
export interface DoorOptions {
  /** The guard in front of this router's non-public routes (given ADMIN_TOKEN), instead of the bearer check. */
  guard?: (adminToken: string | undefined) => Middleware | undefined;
  /** Answers in the door's own shapes (`response` is the whole body, errors `{detail}`), not the envelope. */
  raw?: boolean;
  /** The header the door also takes ADMIN_TOKEN in (documented as an API key). */
  apiKeyHeader?: string;
}

export interface RegisteredRoute extends RouteSpec {
  fullPath: string;
  tag: string;
  /** The answer is the door's own shape, not the envelope. */
  raw?: boolean;
  /** The credential the door takes, when not ADMIN_TOKEN as a bearer token. */
  apiKeyHeader?: string;
}

type Handler<I> = (ctx: Context, input: I) => Promise<void> | void;

interface Mountable extends RegisteredRoute {
  chain: Middleware[];
}

/**
 * Collects the routes of one area, each with a spec. Every route of the API
 * goes through `route()`, so the OpenAPI document cannot drift; `mountAll`
 * puts every area's routes on one @koa/router Router (one match per request).
 */
export class ApiRouter {
  private readonly mountable: Mountable[] = [];

  constructor(
    readonly prefix: string,
    readonly tag: string,
    readonly door: DoorOptions = {},
  ) {}

  get routes(): RegisteredRoute[] {
    return this.mountable.map(({ chain: _chain, ...route }) => route);
  }

  route<I = Validated>(spec: RouteSpec, handler: Handler<I>, ...before: Middleware[]): this {
    const fullPath = (this.prefix + spec.path).replace(/\/$/, '') || '/';
    const run: Middleware = async (ctx) => {
      await handler(ctx, (ctx.state.input ?? { params: {}, query: {}, body: undefined }) as I);
    };
    this.mountable.push({
      ...spec,
      fullPath,
      tag: this.tag,
      ...(this.door.raw ? { raw: true } : {}),
      ...(this.door.apiKeyHeader ? { apiKeyHeader: this.door.apiKeyHeader } : {}),
      chain: [...before, validate(spec.request ?? {}), run],
    });
    return this;
  }

  /**
   * Case-sensitive, like the paths we document: `/API/agent-server/…` matches
   * nothing rather than reaching a route by another spelling. The admin guard
   * runs first in each non-public route's chain, so it covers exactly what
   * the router matched; the JSON body is read next (POST, PATCH, PUT), so
   * neither an unknown path nor a refused caller has its body read.
   */
  static mountAll(routers: ApiRouter[], opts: { adminToken?: string | undefined } = {}): Router {
    const root = new Router({ sensitive: true });
    const adminGuard = adminAuth(opts.adminToken);
    for (const r of routers)
      for (const m of r.mountable) {
        const guard = r.door.guard ? r.door.guard(opts.adminToken) : adminGuard;
        const body = WITH_BODY.has(m.method) ? [jsonBody] : [];
        const chain = guard && !m.public ? [guard, ...body, ...m.chain] : [...body, ...m.chain];
        root[m.method](m.fullPath, ...chain);
      }
    return root;
  }

  /**
   * The router's OPTIONS and 405 answers, behind the same guard: a path that
   * matched a guarded route by another method tells nothing (not even its
   * methods) without the token. Mount after `router.routes()`.
   */
  static allowedMethods(routers: ApiRouter[], router: Router, adminToken: string | undefined): Middleware[] {
    // @koa/router types its middleware for router contexts; Koa's app.use takes it as any middleware.
    const allowed = router.allowedMethods({ throw: true }) as unknown as Middleware;
    const guard = adminAuth(adminToken);
    if (!guard) return [allowed];
    const open = new Set(routers.flatMap((r) => r.mountable.filter((m) => m.public).map((m) => m.fullPath)));
    const guardUnanswered: Middleware = async (ctx, next) => {
      await next();
      const matched = (ctx as { matched?: Array<{ path: string }> }).matched ?? [];
      if (ctx.body == null && matched.some((layer) => !open.has(layer.path)))
        await guard(ctx, async () => {});
    };
    return [allowed, guardUnanswered];
  }
}
