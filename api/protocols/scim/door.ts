import Joi from 'joi';
import type { Context } from 'koa';
import type { AppDeps } from '../../deps.js';
import { ApiRouter } from '../../http/api-router.js';
import { recordAudit, type AuditInput } from '../../../core/audit/audit-log.js';
import { scimAuth } from './auth.js';
import { LIST_RESPONSE, SCIM_CONTENT_TYPE } from './urns.js';

export const SCIM_BASE = '/scim/v2';
export const SCIM_TAG = 'SCIM provisioning';

/**
 * Whether SCIM is served: always in users mode (where it answers 401 until
 * SCIM_TOKEN is set), in open mode only once SCIM_TOKEN is set.
 */
export const scimMounted = (config: AppDeps['config']): boolean =>
  config.auth.mode === 'users' || config.auth.scimToken !== undefined;

/**
 * A router of SCIM: answers in SCIM's own shapes, guarded by SCIM_TOKEN alone
 * in both modes (never a user's credential, nor ADMIN_TOKEN). Its routes need
 * no user permission (`public` as users mode reads it): the token is the whole
 * check (ownCredential).
 */
export const scimRouter = (deps: AppDeps, path: string): ApiRouter =>
  new ApiRouter(SCIM_BASE + path, SCIM_TAG, {
    guard: () => scimAuth(deps.config.auth.scimToken),
    raw: true,
    ownCredential: true,
  }).access({ read: 'public', write: 'public' });

/** A SCIM answer: its media type, and a Location for a created resource. */
export function sendScim(ctx: Context, body: unknown, status = 200): void {
  ctx.status = status;
  ctx.body = body;
  ctx.type = SCIM_CONTENT_TYPE;
}

/** Where a resource lives, absolute (meta.location, Location): PUBLIC_URL's origin, else the request's. */
export function locationOf(ctx: Context, publicUrl: string | undefined, path: string): string {
  const base = (publicUrl || `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, '');
  return `${base}${SCIM_BASE}${path}`;
}

/** The paging query of a list (RFC 7644 §3.4.2.4) and the attribute selection of any read (§3.4.2.5). */
export const readQuery = {
  attributes: Joi.string().max(2000),
  excludedAttributes: Joi.string().max(2000),
};
export const listQuery = Joi.object({
  filter: Joi.string().max(2000),
  startIndex: Joi.number().integer(),
  count: Joi.number().integer(),
  ...readQuery,
}).unknown(true);

/** The most resources one page holds (ServiceProviderConfig's filter.maxResults). */
export const MAX_RESULTS = 200;

/** startIndex (1-based, below 1 taken as 1) and count (negative taken as 0, capped) as offset and limit. */
export function pageOf(query: { startIndex?: number; count?: number }): { offset: number; limit: number } {
  const start = Math.max(1, query.startIndex ?? 1);
  const count = Math.min(MAX_RESULTS, Math.max(0, query.count ?? 100));
  return { offset: start - 1, limit: count };
}

export function listResponse(resources: unknown[], total: number, offset: number): Record<string, unknown> {
  return {
    schemas: [LIST_RESPONSE],
    totalResults: total,
    startIndex: offset + 1,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

/** Attributes always returned, whatever `attributes` or `excludedAttributes` say (RFC 7643 §7 `returned: always`). */
const ALWAYS = new Set(['schemas', 'id']);

/**
 * `attributes` (only these) or `excludedAttributes` (all but these), on top-level
 * attributes and, with a dotted name, their sub-attributes' parents: `name.givenName`
 * keeps `name`. Names are compared case-insensitively.
 */
export function selectAttributes(
  resource: Record<string, unknown>,
  query: { attributes?: string; excludedAttributes?: string },
): Record<string, unknown> {
  const names = (list: string) =>
    new Set(
      list.split(',').map(
        (a) =>
          a
            .trim()
            .toLowerCase()
            .replace(/^urn:.*:/, '')
            .split('.')[0]!,
      ),
    );
  if (query.attributes) {
    const keep = names(query.attributes);
    return Object.fromEntries(
      Object.entries(resource).filter(([k]) => ALWAYS.has(k) || keep.has(k.toLowerCase())),
    );
  }
  if (query.excludedAttributes) {
    const drop = names(query.excludedAttributes);
    return Object.fromEntries(
      Object.entries(resource).filter(([k]) => ALWAYS.has(k) || !drop.has(k.toLowerCase())),
    );
  }
  return resource;
}

/** SCIM's actor in the audit log: the identity provider holding SCIM_TOKEN. */
const SCIM_ACTOR = { kind: 'scim', name: 'scim' } as const;

/** Records one change SCIM made, with where the request came from. */
export function auditScim(
  ctx: Context,
  deps: AppDeps,
  event: Pick<AuditInput, 'action' | 'resourceType' | 'resourceId' | 'before' | 'after' | 'details'>,
): Promise<void> {
  return recordAudit(deps.db, {
    actor: SCIM_ACTOR,
    method: ctx.method,
    path: ctx.path,
    status: ctx.status,
    ip: ctx.ip,
    userAgent: ctx.get('user-agent') || undefined,
    ...event,
  });
}
