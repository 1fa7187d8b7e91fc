import type { Context, Middleware, Next } from 'koa';
import { auditScope, recordAudit } from '../../core/audit/audit-log.js';
import type { Db } from '../../core/db/knex.js';
import type { RegisteredRoute } from './route-spec.js';
import type { ProjectLocator } from './project-of.js';

/**
 * The audit trail of the routes mounted through ApiRouter (docs/audit-log.md):
 * one row per change that succeeded, per change refused with 403, and per
 * request of any kind made with the break-glass ADMIN_TOKEN in users mode.
 * A handler that records its own event (logins, users, tokens) gets no
 * second row; a route may opt out altogether with `audit: false`.
 */

/** What a route's rows are called: `<resource>.<verb>`, e.g. `agent.update`, `virtual_key.rotate`. */
export interface AuditName {
  action: string;
  resourceType: string;
  /** Whether the route changes something (every request is recorded) or reads (only break-glass ones are). */
  change: boolean;
}

/** The configuration API's prefix: its resources are named without it; the doors keep their name (`langgraph.…`). */
const CONFIGURATION_API = /^\/api\/agent-server\//;
/** Permissions of routes that read, whatever their method (the Agent Protocol's `POST …/search`). */
const READ_PERMISSIONS = new Set(['public', 'org:read', 'project:read']);
const VERB_OF: Record<string, string> = {
  post: 'create',
  put: 'update',
  patch: 'update',
  delete: 'delete',
  get: 'read',
};

const singular = (segment: string): string =>
  segment.endsWith('ies') ? `${segment.slice(0, -3)}y` : segment.replace(/([^s])s$/, '$1');
const snake = (segment: string): string => segment.replaceAll('-', '_');

/**
 * A route's action, from its path: the literal segments (parameters and the
 * configuration API's prefix left out), nouns in the singular, then the
 * method's verb (create, update, delete, read). A POST whose path ends in a
 * literal that is not a collection (no route below it takes a parameter)
 * names its own verb: `POST /virtual-keys/:id/rotate` is
 * `virtual_key.rotate` and `POST /converse` is `converse`, while
 * `POST /prompts/:name/versions` is `prompt.version.create`; a POST to a
 * path ending in a parameter (`/api/a2a/:agent_id`) is a `call`. `paths`
 * holds every mounted route's full path.
 */
export function auditNameOf(
  route: Pick<RegisteredRoute, 'method' | 'fullPath' | 'permission' | 'audit'>,
  paths: ReadonlySet<string>,
): AuditName | undefined {
  if (route.audit === false || route.permission === 'public') return undefined;
  const change = route.method !== 'get' && !READ_PERMISSIONS.has(route.permission);
  const parts = route.fullPath.replace(CONFIGURATION_API, '/').split('/').filter(Boolean);
  const literals = parts.filter((p, i) => !p.startsWith(':') && !(i === 0 && p === 'api')).map(snake);
  const endsInParam = parts.at(-1)?.startsWith(':') ?? false;
  const below = `${route.fullPath}/:`;
  const collection = [...paths].some((p) => p.startsWith(below) && !p.slice(below.length).includes('/'));
  const ownVerb = route.method === 'post' && !endsInParam && !collection;
  const nouns = (ownVerb ? literals.slice(0, -1) : literals).map(singular);
  const verb = ownVerb
    ? literals.at(-1)!
    : route.method === 'post' && endsInParam
      ? 'call'
      : VERB_OF[route.method]!;
  const resourceType = CONFIGURATION_API.test(route.fullPath)
    ? (nouns[0] ?? verb)
    : nouns.slice(0, 2).join('.');
  return { action: route.audit ?? [...nouns, verb].join('.'), resourceType, change };
}

/** What the snapshot middleware leaves for the trail: the resource's row before and after the handler. */
interface Snapshot {
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
}

/** Organisation-level resources have no project locator; their rows are still worth a before and after. */
const ORG_TABLES: Record<string, ProjectLocator> = {
  provider: { table: 'providers' },
  virtual_key: { table: 'virtual_keys' },
};

/** Where a change's row is read (none for reads, nor for a locator reaching its project through a join). */
export function snapshotLocator(
  route: Pick<RegisteredRoute, 'project'>,
  name: AuditName | undefined,
): ProjectLocator | undefined {
  if (!name?.change) return undefined;
  const locator = route.project ?? ORG_TABLES[name.resourceType];
  return locator?.join ? undefined : locator;
}

/** Per request, between the snapshot middleware and the trail. */
const snapshots = new WeakMap<Context, Snapshot>();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const asUuid = (v: unknown): string | undefined => (typeof v === 'string' && UUID.test(v) ? v : undefined);

async function rowOf(
  db: Db,
  locator: ProjectLocator,
  ctx: Context,
): Promise<Record<string, unknown> | null | undefined> {
  const key = ((ctx.params ?? {}) as Record<string, unknown>)[locator.param ?? 'id'];
  if (typeof key !== 'string') return undefined;
  const column = locator.column ?? 'id';
  if (column === 'id' && !UUID.test(key)) return undefined;
  const query = db(locator.table).where(`${locator.table}.${column}`, key).limit(2);
  const projectId = asUuid(
    (ctx.state.input as { query?: { project_id?: unknown } } | undefined)?.query?.project_id,
  );
  if (projectId && locator.projectColumn === undefined) query.where(`${locator.table}.project_id`, projectId);
  const rows = await query.select(`${locator.table}.*`);
  // The same name in two projects: no single row to show.
  return rows.length === 1 ? (rows[0] as Record<string, unknown>) : rows.length === 0 ? null : undefined;
}

/**
 * Just before the handler (after validation and the permission checks, so a
 * refused request reads nothing): the resource's row before, and after the
 * handler returns, its row again.
 */
export function auditSnapshot(db: Db, locator: ProjectLocator): Middleware {
  return async function auditSnapshotMiddleware(ctx: Context, next: Next): Promise<void> {
    const snapshot: Snapshot = { before: await safely(ctx, () => rowOf(db, locator, ctx)) };
    snapshots.set(ctx, snapshot);
    await next();
    if (snapshot.before !== undefined && ctx.status < 400)
      snapshot.after = await safely(ctx, () => rowOf(db, locator, ctx));
  };
}

/** A snapshot that cannot be read leaves the row without it; the request goes on. */
async function safely<T>(ctx: Context, read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    ctx.state.log.warn({ err }, 'audit snapshot not read');
    return undefined;
  }
}

const statusOf = (err: unknown): number => {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 600 ? status : 500;
};

/** A create's answer: the envelope's `data` (or a door's own body) when it is an object with an id. */
function createdOf(ctx: Context, route: Pick<RegisteredRoute, 'raw'>): Record<string, unknown> | undefined {
  const body = ctx.body as { data?: unknown } | undefined;
  const data = route.raw ? body : body?.data;
  return data && typeof data === 'object' && !Array.isArray(data) && 'id' in data ? data : undefined;
}

/**
 * First in the route's chain (before the guard, so it sees refusals): after
 * the handler returns — a streamed answer is not waited for nor buffered —
 * writes the row. A failed write is logged; the caller's answer stands.
 * Nor is a row written when the handler recorded its own event (recordAudit
 * within the request), which says more than this generic one would.
 */
export function auditTrail(db: Db, route: RegisteredRoute, name: AuditName): Middleware {
  const locator = snapshotLocator(route, name);
  const settle = async (ctx: Context, status: number, described: boolean): Promise<void> => {
    // The handler recorded the event itself, in its own words (a user created, a token revoked).
    if (described) return;
    const principal = ctx.state.principal;
    const breakGlass = principal?.kind === 'admin_token';
    const denied = status === 403 && principal !== undefined && name.change;
    if (!breakGlass && !denied && !(name.change && status < 400)) return;
    const action = status < 400 ? name.action : `${name.action}.${denied ? 'denied' : 'failed'}`;
    try {
      await record(db, ctx, route, name, action, status, locator);
    } catch (err) {
      ctx.state.log.error({ err, action }, 'audit event not recorded');
    }
  };
  return async function auditTrailMiddleware(ctx: Context, next: Next): Promise<void> {
    const scope = { recorded: false };
    try {
      await auditScope.run(scope, next);
    } catch (err) {
      await settle(ctx, statusOf(err), scope.recorded);
      throw err;
    }
    // A handler that answered on the raw response (an SSE stream, the MCP SDK) set its status there.
    await settle(ctx, ctx.respond === false ? ctx.res.statusCode : ctx.status, scope.recorded);
  };
}

/** A JSON-RPC door's message (MCP, A2A): which method, and for an MCP tool call, which tool. */
function rpcOf(ctx: Context, route: Pick<RegisteredRoute, 'raw'>): Record<string, string> {
  const body = route.raw
    ? (ctx.request.body as { method?: unknown; params?: { name?: unknown } } | undefined)
    : undefined;
  if (!body || typeof body !== 'object' || typeof body.method !== 'string') return {};
  const tool =
    body.method === 'tools/call' && typeof body.params?.name === 'string' ? body.params.name : undefined;
  return { rpc_method: body.method.slice(0, 200), ...(tool ? { tool: tool.slice(0, 200) } : {}) };
}

async function record(
  db: Db,
  ctx: Context,
  route: RegisteredRoute,
  name: AuditName,
  action: string,
  status: number,
  locator: ProjectLocator | undefined,
): Promise<void> {
  const principal = ctx.state.principal!;
  const snapshot = snapshots.get(ctx) ?? {};
  const created = status < 400 && route.method === 'post' ? createdOf(ctx, route) : undefined;
  const after = snapshot.before === undefined && locator ? created : snapshot.after;
  const params = (ctx.params ?? {}) as Record<string, string>;
  const input = (ctx.state.input ?? {}) as { query?: Record<string, unknown>; body?: unknown };
  const projectColumn = locator?.projectColumn ?? 'project_id';
  // A refused change read no snapshot: its resource's project is still worth naming.
  const refusedOn = status === 403 && locator ? await safely(ctx, () => rowOf(db, locator, ctx)) : undefined;
  const projectId =
    asUuid(params.project_id) ??
    asUuid((snapshot.before ?? refusedOn)?.[projectColumn]) ??
    asUuid(after?.[projectColumn]) ??
    asUuid(input.query?.project_id) ??
    asUuid((input.body as { project_id?: unknown } | undefined)?.project_id);
  const resourceId =
    Object.entries(params).find(([k]) => k !== 'project_id')?.[1] ??
    (typeof created?.id === 'string' ? created.id : undefined);
  await recordAudit(db, {
    actor: principal,
    action,
    resourceType: name.resourceType,
    ...(resourceId !== undefined ? { resourceId } : {}),
    ...(projectId ? { projectId } : {}),
    method: route.method.toUpperCase(),
    path: route.fullPath,
    status,
    ip: ctx.ip,
    userAgent: ctx.get('user-agent') || undefined,
    ...(snapshot.before ? { before: snapshot.before } : {}),
    ...(after && status < 400 ? { after } : {}),
    details: {
      path: ctx.path,
      ...rpcOf(ctx, route),
      ...(principal.tokenId ? { token_id: principal.tokenId } : {}),
      ...(principal.sessionId ? { via: 'session' } : {}),
    },
  });
}
