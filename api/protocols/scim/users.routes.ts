import Joi from 'joi';
import type { Context } from 'koa';
import type { AppDeps } from '../../deps.js';
import type { ApiRouter } from '../../http/api-router.js';
import { parseFilter } from './filter.js';
import { ScimError } from './errors.js';
import { isUuid } from './store-filters.js';
import {
  auditScim,
  listQuery,
  listResponse,
  locationOf,
  pageOf,
  readQuery,
  scimRouter,
  selectAttributes,
  sendScim,
} from './door.js';
import { userPatch } from './user-patch.js';
import { userFieldsOf, userResource } from './users-view.js';
import { USER_FILTERS, ScimUsersStore, type ScimUserFields, type ScimUserRow } from './users-store.js';
import { SCIM_CONTENT_TYPE } from './urns.js';

const idParams = Joi.object({ id: Joi.string().max(200).required() });
const resourceBody = Joi.object().unknown(true);
const SCIM_BODY = [SCIM_CONTENT_TYPE];

interface ReadQuery {
  attributes?: string;
  excludedAttributes?: string;
}

const notFound = (id: string) => new ScimError(404, undefined, `User ${id} not found`);
const taken = (userName: string) =>
  new ScimError(409, 'uniqueness', `userName ${JSON.stringify(userName)} is already taken`);

/** What the audit log keeps of a user: the columns SCIM manages. */
const audited = (row: ScimUserRow) => ({
  user_name: row.user_name,
  display_name: row.display_name,
  email: row.email,
  external_id: row.external_id,
  active: row.active,
});

/**
 * /scim/v2/Users: users created, read, listed, replaced, patched and
 * deleted by an identity provider. `active: false` deactivates: the user's
 * sessions end at once and their API tokens are refused from the next
 * request on, on every replica. DELETE deletes the user (RFC 7644 §3.6: a
 * deleted resource is gone, and its userName free for a new one).
 */
export function scimUserRoutes(deps: AppDeps): ApiRouter {
  const store = new ScimUsersStore(deps.db);
  const location = (ctx: Context) => (path: string) => locationOf(ctx, deps.config.publicUrl, path);
  const render = async (ctx: Context, rows: ScimUserRow[], query: ReadQuery) => {
    const groups = await store.groupsOf(rows.map((r) => r.id));
    return rows.map((r) => selectAttributes(userResource(r, groups.get(r.id)!, location(ctx)), query));
  };
  const existing = async (id: string) => {
    const row = isUuid(id) ? await store.get(id) : undefined;
    if (!row) throw notFound(id);
    return row;
  };
  /**
   * Applies what `compute` makes of the user: first on the row as read, so a
   * bad request or a userName another user holds is refused before anything
   * is locked, then on the row locked for the change.
   */
  const change = async (ctx: Context, id: string, compute: (row: ScimUserRow) => ScimUserFields) => {
    const preview = compute(await existing(id));
    if (preview.user_name !== undefined && (await store.userNameTaken(preview.user_name, id)))
      throw taken(preview.user_name);
    const result = await store.update(id, compute);
    if (!result) throw notFound(id);
    const { before, after } = result;
    const [resource] = await render(ctx, [after], {});
    sendScim(ctx, resource);
    if (after === before) return; // nothing changed, nothing to record
    await auditScim(ctx, deps, {
      action: before.active && !after.active ? 'user.deactivate' : 'user.update',
      resourceType: 'user',
      resourceId: after.id,
      before: audited(before),
      after: audited(after),
    });
  };

  return scimRouter(deps, '/Users')
    .route(
      {
        method: 'get',
        path: '/',
        summary: 'List users (SCIM)',
        description:
          'A ListResponse. `filter` takes `eq` comparisons joined by `and` on userName, externalId, id, displayName, ' +
          'emails.value and active; `startIndex` (1-based) and `count` (at most 200) page.',
        request: { query: listQuery },
        produces: SCIM_CONTENT_TYPE,
      },
      async (
        ctx,
        { query }: { query: { filter?: string; startIndex?: number; count?: number } & ReadQuery },
      ) => {
        const filter = query.filter ? parseFilter(query.filter, Object.keys(USER_FILTERS)) : [];
        const { offset, limit } = pageOf(query);
        const { total, rows } = await store.list(filter, offset, limit);
        sendScim(ctx, listResponse(await render(ctx, rows, query), total, offset));
      },
    )
    .route(
      {
        method: 'get',
        path: '/:id',
        summary: 'Get a user (SCIM)',
        request: { params: idParams, query: Joi.object(readQuery).unknown(true) },
        produces: SCIM_CONTENT_TYPE,
      },
      async (ctx, { params, query }: { params: { id: string }; query: ReadQuery }) => {
        const [resource] = await render(ctx, [await existing(params.id)], query);
        sendScim(ctx, resource);
      },
    )
    .route(
      {
        method: 'post',
        path: '/',
        summary: 'Create a user (SCIM)',
        description:
          '201 with the User and its Location; a userName already taken (any case) is a 409 uniqueness.',
        request: { body: resourceBody },
        consumes: SCIM_BODY,
        produces: SCIM_CONTENT_TYPE,
      },
      async (ctx, { body }) => {
        const fields = userFieldsOf(body);
        if (await store.userNameTaken(fields.user_name)) throw taken(fields.user_name);
        const row = await store.insert(fields);
        const [resource] = await render(ctx, [row], {});
        ctx.set('Location', location(ctx)(`/Users/${row.id}`));
        sendScim(ctx, resource, 201);
        await auditScim(ctx, deps, {
          action: 'user.create',
          resourceType: 'user',
          resourceId: row.id,
          after: audited(row),
        });
      },
    )
    .route(
      {
        method: 'put',
        path: '/:id',
        summary: 'Replace a user (SCIM)',
        description: 'Attributes left out are cleared, except `active`, which stays as it is.',
        request: { params: idParams, body: resourceBody },
        consumes: SCIM_BODY,
        produces: SCIM_CONTENT_TYPE,
      },
      async (ctx, { params, body }: { params: { id: string }; body: unknown }) => {
        const fields = userFieldsOf(body);
        await change(ctx, params.id, () => fields);
      },
    )
    .route(
      {
        method: 'patch',
        path: '/:id',
        summary: 'Patch a user (SCIM)',
        description:
          'A PatchOp: add, replace or remove on userName, displayName, name, emails, externalId and active, by ' +
          'path or as an object of attributes without one; `active` may be "True"/"False". `active: false` ends ' +
          "the user's sessions and refuses their tokens from the next request on.",
        request: { params: idParams, body: resourceBody },
        consumes: SCIM_BODY,
        produces: SCIM_CONTENT_TYPE,
      },
      async (ctx, { params, body }: { params: { id: string }; body: unknown }) => {
        await change(ctx, params.id, (row) => userPatch(row, body));
      },
    )
    .route(
      {
        method: 'delete',
        path: '/:id',
        summary: 'Delete a user (SCIM)',
        description: 'Deletes the user with their sessions, tokens, roles and group memberships (204).',
        request: { params: idParams },
        produces: SCIM_CONTENT_TYPE,
      },
      async (ctx, { params }: { params: { id: string } }) => {
        const row = isUuid(params.id) ? await store.delete(params.id) : undefined;
        if (!row) throw notFound(params.id);
        ctx.status = 204;
        await auditScim(ctx, deps, {
          action: 'user.delete',
          resourceType: 'user',
          resourceId: row.id,
          before: audited(row),
        });
      },
    );
}
