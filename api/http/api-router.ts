import Router from '@koa/router';
import type Joi from 'joi';
import type { Context, Middleware } from 'koa';
import { validate, type RequestSchemas, type Validated } from '../middleware/validate.js';

export type HttpMethod = 'get' | 'post' | 'patch' | 'put' | 'delete';

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
}

export interface RegisteredRoute extends RouteSpec {
  fullPath: string;
  tag: string;
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
      chain: [...before, validate(spec.request ?? {}), run],
    });
    return this;
  }

  static mountAll(routers: ApiRouter[]): Router {
    const root = new Router();
    for (const r of routers) for (const m of r.mountable) root[m.method](m.fullPath, ...m.chain);
    return root;
  }
}
