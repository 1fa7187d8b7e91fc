import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { adminAuth } from '../middleware/admin-auth.js';
import { validate, type Validated } from '../middleware/validate.js';
import { jsonBody } from './body-reader.js';
import { authorizeAnywhere, authorizeProject, type AccessRuntime } from './authorize.js';
import { openPrincipal, usersGuard } from './authenticate.js';
import { auditNameOf, auditSnapshot, auditTrail, snapshotLocator } from './audit.js';
import type { Permission } from '../../core/auth/roles.js';
import type { DoorOptions, HttpMethod, RegisteredRoute, RouteSpec, RouterAccess } from './route-spec.js';

export type { DoorOptions, HttpMethod, RegisteredRoute, RouteSpec, RouterAccess } from './route-spec.js';

/** The methods whose requests carry a body (read after the route's guard, before its own middleware). */
const WITH_BODY = new Set<HttpMethod>(['post', 'patch', 'put']);

type Handler<I> = (ctx: Context, input: I) => Promise<void> | void;

interface Mountable extends RegisteredRoute {
  /** The route's own body readers (before validation). */
  before: Middleware[];
  validateAndRun: Middleware[];
}

/**
 * Collects the routes of one area, each with a spec. Every route of the API
 * goes through `route()`, so the OpenAPI document cannot drift; `mountAll`
 * puts every area's routes on one @koa/router Router (one match per request).
 */
export class ApiRouter {
  private readonly mountable: Mountable[] = [];
  private defaults: RouterAccess | undefined;

  constructor(
    readonly prefix: string,
    readonly tag: string,
    readonly door: DoorOptions = {},
  ) {}

  get routes(): RegisteredRoute[] {
    return this.mountable.map(({ before: _b, validateAndRun: _v, ...route }) => route);
  }

  /** The permissions of the routes declared after this call (each may still name its own). */
  access(defaults: RouterAccess): this {
    this.defaults = defaults;
    return this;
  }

  private permissionOf(spec: RouteSpec, fullPath: string): Permission {
    if (spec.public) return 'public';
    const permission =
      spec.permission ?? (spec.method === 'get' ? this.defaults?.read : this.defaults?.write);
    // At start-up, not at the first request: a route nobody gave a permission cannot be mounted.
    if (!permission) throw new Error(`${spec.method.toUpperCase()} ${fullPath} declares no permission`);
    return permission;
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
      permission: this.permissionOf(spec, fullPath),
      ...(this.defaults?.project ? { project: this.defaults.project } : {}),
      ...(this.door.raw ? { raw: true } : {}),
      ...(this.door.apiKeyHeader ? { apiKeyHeader: this.door.apiKeyHeader } : {}),
      ...(this.door.ownCredential ? { ownCredential: true } : {}),
      before,
      validateAndRun: [validate(spec.request ?? {}), run],
    });
    return this;
  }

  /**
   * Case-sensitive, like the paths we document: `/API/agent-server/…` matches
   * nothing rather than reaching a route by another spelling. The guard runs
   * first in each non-public route's chain, so it covers exactly what the
   * router matched; in users mode the permission is checked next (does any
   * project give it?), then the JSON body is read (POST, PATCH, PUT), so
   * neither an unknown path nor a refused caller has its body read; once the
   * input is valid, the project it names must give it. The audit trail
   * comes first, in both modes, so it sees refusals too; its snapshot of the
   * changed row is read last, just before the handler (api/http/audit.ts).
   */
  static mountAll(
    routers: ApiRouter[],
    opts: { adminToken?: string | undefined; access?: AccessRuntime } = {},
  ): Router {
    const root = new Router({ sensitive: true });
    const users = opts.access?.config.auth.mode === 'users' ? opts.access : undefined;
    const adminGuard = adminAuth(opts.adminToken);
    const open = openPrincipal({ adminToken: opts.adminToken });
    const db = opts.access?.db;
    const paths = new Set(routers.flatMap((r) => r.mountable.map((m) => m.fullPath)));
    for (const r of routers)
      for (const m of r.mountable) {
        const body = WITH_BODY.has(m.method) ? [jsonBody] : [];
        const audit = db ? auditNameOf(m, paths) : undefined;
        const locator = snapshotLocator(m, audit);
        const trail = db && audit ? [auditTrail(db, m, audit)] : [];
        const snapshot = db && locator ? [auditSnapshot(db, locator)] : [];
        const input = [...body, ...m.before];
        if (m.ownCredential) {
          // Its caller is no user and holds no role: its guard alone decides, in either mode.
          const own = r.door.guard?.(opts.adminToken);
          if (!own) throw new Error(`${m.fullPath}: a door with its own credential needs a guard`);
          root[m.method](m.fullPath, own, ...input, ...m.validateAndRun);
          continue;
        }
        if (users) {
          const chain = m.public
            ? [...input, ...m.validateAndRun]
            : [
                ...trail,
                usersGuard(users, m.apiKeyHeader),
                authorizeAnywhere(users, m),
                ...input,
                ...m.validateAndRun.slice(0, 1),
                authorizeProject(users, m),
                ...snapshot,
                ...m.validateAndRun.slice(1),
              ];
          root[m.method](m.fullPath, ...chain);
          continue;
        }
        const guard = r.door.guard ? r.door.guard(opts.adminToken) : adminGuard;
        const guarded = guard && !m.public ? [guard] : [];
        root[m.method](
          m.fullPath,
          ...trail,
          ...guarded,
          open,
          ...input,
          ...m.validateAndRun.slice(0, 1),
          ...snapshot,
          ...m.validateAndRun.slice(1),
        );
      }
    return root;
  }

  /**
   * The router's OPTIONS and 405 answers, behind the same guard: a path that
   * matched a guarded route by another method tells nothing (not even its
   * methods) without the token. Mount after `router.routes()`.
   */
  static allowedMethods(
    routers: ApiRouter[],
    router: Router,
    adminToken: string | undefined,
    access?: AccessRuntime,
  ): Middleware[] {
    // @koa/router types its middleware for router contexts; Koa's app.use takes it as any middleware.
    const allowed = router.allowedMethods({ throw: true }) as unknown as Middleware;
    const guard = access?.config.auth.mode === 'users' ? usersGuard(access) : adminAuth(adminToken);
    // A door with its own credential (SCIM) answers behind that one: its token gets a 405, not a 401.
    const own = new Map<string, Middleware | undefined>();
    for (const r of routers)
      for (const m of r.mountable) if (m.ownCredential) own.set(m.fullPath, r.door.guard?.(adminToken));
    if (!guard && own.size === 0) return [allowed];
    const open = new Set(routers.flatMap((r) => r.mountable.filter((m) => m.public).map((m) => m.fullPath)));
    const guardUnanswered: Middleware = async (ctx, next) => {
      await next();
      const matched = (ctx as { matched?: Array<{ path: string }> }).matched ?? [];
      const guarded = matched.find((layer) => !open.has(layer.path));
      if (ctx.body != null || !guarded) return;
      const check = own.has(guarded.path) ? own.get(guarded.path) : guard;
      if (check) await check(ctx, async () => {});
    };
    return [allowed, guardUnanswered];
  }
}
