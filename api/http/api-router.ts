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

/**
 * A @koa/router Router that records a spec for each route. Every route of the
 * configuration API goes through `route()`, so the document cannot drift.
 */
export class ApiRouter {
  readonly router: Router;
  readonly routes: RegisteredRoute[] = [];

  constructor(
    readonly prefix: string,
    readonly tag: string,
  ) {
    this.router = new Router({ prefix });
  }

  route<I = Validated>(spec: RouteSpec, handler: Handler<I>, ...before: Middleware[]): this {
    const fullPath = (this.prefix + spec.path).replace(/\/$/, '') || '/';
    this.routes.push({ ...spec, fullPath, tag: this.tag });
    const run: Middleware = async (ctx) => {
      await handler(ctx, (ctx.state.input ?? { params: {}, query: {}, body: undefined }) as I);
    };
    this.router[spec.method](spec.path, ...before, validate(spec.request ?? {}), run);
    return this;
  }
}
