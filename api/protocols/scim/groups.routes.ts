import Joi from 'joi';
import type { Context } from 'koa';
import type { AppDeps } from '../../deps.js';
import type { ApiRouter } from '../../http/api-router.js';
import { invalidValue, ScimError } from './errors.js';
import { parseFilter } from './filter.js';
import { GROUP_FILTERS, MEMBER_FILTERS, ScimGroupsStore, type ScimGroupRow } from './groups-store.js';
import {
  addedMembers,
  applyGroupPatch,
  groupFieldsOf,
  groupOperations,
  groupResource,
} from './groups-view.js';
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
import { SCIM_CONTENT_TYPE } from './urns.js';

const idParams = Joi.object({ id: Joi.string().max(200).required() });
const resourceBody = Joi.object().unknown(true);
const SCIM_BODY = [SCIM_CONTENT_TYPE];
const FILTERABLE = [...Object.keys(GROUP_FILTERS), ...Object.keys(MEMBER_FILTERS)];

interface ReadQuery {
  attributes?: string;
  excludedAttributes?: string;
}

const notFound = (id: string) => new ScimError(404, undefined, `Group ${id} not found`);
const taken = (displayName: string) =>
  new ScimError(409, 'uniqueness', `a group named ${JSON.stringify(displayName)} already exists`);

type Audited = ScimGroupRow & { members: string[] };
const audited = (g: Audited) => ({
  display_name: g.display_name,
  external_id: g.external_id,
  members: g.members,
});

/**
 * /scim/v2/Groups: groups and their members, kept by an identity provider.
 * A group's displayName is what AUTH_GROUP_ROLES maps to roles, and roles
 * are read on every request: a member added or removed gains or loses the
 * group's roles on their next request.
 */
export function scimGroupRoutes(deps: AppDeps): ApiRouter {
  const store = new ScimGroupsStore(deps.db);
  const location = (ctx: Context) => (path: string) => locationOf(ctx, deps.config.publicUrl, path);
  const render = async (ctx: Context, rows: ScimGroupRow[], query: ReadQuery) => {
    // Members are read only when shown: Entra ID lists groups with excludedAttributes=members.
    const wanted = selectAttributes({ members: true }, query).members === true;
    const members = wanted ? await store.membersOf(rows.map((r) => r.id)) : undefined;
    return rows.map((r) =>
      selectAttributes(groupResource(r, members?.get(r.id) ?? [], location(ctx)), query),
    );
  };
  const refuseUnknownUsers = async (ids: string[]) => {
    const unknown = await store.unknownUsers(ids);
    if (unknown.length > 0) throw invalidValue(`no user with id ${unknown.slice(0, 5).join(', ')}`);
  };
  /** Applies a change; undefined from the store means the group went meanwhile. */
  const change = async (
    ctx: Context,
    id: string,
    apply: (row: ScimGroupRow, held: string[]) => ReturnType<typeof applyGroupPatch>,
  ) => {
    const result = await store.update(id, (row, held) => apply(row, held));
    if (!result) throw notFound(id);
    const [resource] = await render(ctx, [result.after], {});
    sendScim(ctx, resource);
    if (result.after === result.before) return; // nothing changed, nothing to record
    await auditScim(ctx, deps, {
      action: 'group.update',
      resourceType: 'group',
      resourceId: id,
      before: audited(result.before),
      after: audited(result.after),
    });
  };
  const refuseTakenName = async (displayName: string | undefined, id?: string) => {
    if (displayName !== undefined && (await store.displayNameTaken(displayName, id)))
      throw taken(displayName);
  };

  return scimRouter(deps, '/Groups')
    .route(
      {
        method: 'get',
        path: '/',
        summary: 'List groups (SCIM)',
        description:
          'A ListResponse. `filter` takes `eq` comparisons joined by `and` on displayName (exact), externalId, id ' +
          'and members (a user id); `startIndex` and `count` page; `excludedAttributes=members` leaves members out.',
        request: { query: listQuery },
        produces: SCIM_CONTENT_TYPE,
      },
      async (
        ctx,
        { query }: { query: { filter?: string; startIndex?: number; count?: number } & ReadQuery },
      ) => {
        const filter = query.filter ? parseFilter(query.filter, FILTERABLE) : [];
        const { offset, limit } = pageOf(query);
        const { total, rows } = await store.list(filter, offset, limit);
        sendScim(ctx, listResponse(await render(ctx, rows, query), total, offset));
      },
    )
    .route(
      {
        method: 'get',
        path: '/:id',
        summary: 'Get a group (SCIM)',
        request: { params: idParams, query: Joi.object(readQuery).unknown(true) },
        produces: SCIM_CONTENT_TYPE,
      },
      async (ctx, { params, query }: { params: { id: string }; query: ReadQuery }) => {
        const row = isUuid(params.id) ? await store.get(params.id) : undefined;
        if (!row) throw notFound(params.id);
        const [resource] = await render(ctx, [row], query);
        sendScim(ctx, resource);
      },
    )
    .route(
      {
        method: 'post',
        path: '/',
        summary: 'Create a group (SCIM)',
        description: '201 with the Group and its Location; a displayName already taken is a 409 uniqueness.',
        request: { body: resourceBody },
        consumes: SCIM_BODY,
        produces: SCIM_CONTENT_TYPE,
      },
      async (ctx, { body }) => {
        const { fields, members } = groupFieldsOf(body);
        await refuseTakenName(fields.display_name);
        await refuseUnknownUsers(members);
        const row = await store.insert(fields, [...new Set(members)]);
        const [resource] = await render(ctx, [row], {});
        ctx.set('Location', location(ctx)(`/Groups/${row.id}`));
        sendScim(ctx, resource, 201);
        await auditScim(ctx, deps, {
          action: 'group.create',
          resourceType: 'group',
          resourceId: row.id,
          after: audited({ ...row, members }),
        });
      },
    )
    .route(
      {
        method: 'put',
        path: '/:id',
        summary: 'Replace a group (SCIM)',
        description: 'Its displayName, externalId and members become exactly those given.',
        request: { params: idParams, body: resourceBody },
        consumes: SCIM_BODY,
        produces: SCIM_CONTENT_TYPE,
      },
      async (ctx, { params, body }: { params: { id: string }; body: unknown }) => {
        if (!isUuid(params.id)) throw notFound(params.id);
        const { fields, members } = groupFieldsOf(body);
        await refuseTakenName(fields.display_name, params.id);
        await refuseUnknownUsers(members);
        await change(ctx, params.id, () => ({ fields, members: [...new Set(members)] }));
      },
    )
    .route(
      {
        method: 'patch',
        path: '/:id',
        summary: 'Patch a group (SCIM)',
        description:
          'A PatchOp: members added, removed (by a list of values, by `members[value eq "<id>"]`, or all) or ' +
          'replaced; displayName and externalId replaced. A member gains or loses the roles AUTH_GROUP_ROLES gives ' +
          'the group on their next request.',
        request: { params: idParams, body: resourceBody },
        consumes: SCIM_BODY,
        produces: SCIM_CONTENT_TYPE,
      },
      async (ctx, { params, body }: { params: { id: string }; body: unknown }) => {
        if (!isUuid(params.id)) throw notFound(params.id);
        const operations = groupOperations(body);
        const renamed = operations.findLast((o) => o.path === 'displayname' && o.op !== 'remove');
        await refuseTakenName(typeof renamed?.value === 'string' ? renamed.value : undefined, params.id);
        await refuseUnknownUsers(addedMembers(operations));
        await change(ctx, params.id, (row, held) => applyGroupPatch(row, held, operations));
      },
    )
    .route(
      {
        method: 'delete',
        path: '/:id',
        summary: 'Delete a group (SCIM)',
        description: 'Its members lose the roles it gave on their next request (204).',
        request: { params: idParams },
        produces: SCIM_CONTENT_TYPE,
      },
      async (ctx, { params }: { params: { id: string } }) => {
        const row = isUuid(params.id) ? await store.delete(params.id) : undefined;
        if (!row) throw notFound(params.id);
        ctx.status = 204;
        await auditScim(ctx, deps, {
          action: 'group.delete',
          resourceType: 'group',
          resourceId: row.id,
          before: { display_name: row.display_name, external_id: row.external_id },
        });
      },
    );
}
