import type { Context } from 'koa';
import { ValidationError } from '../../../core/errors.js';
import { parseFilter } from '../../../core/memory/filter.js';
import { MemoryStore } from '../../../core/memory/memory-store.js';
import type { StoreItemRow } from '../../../core/repositories/memory-store.repository.js';
import type { Validated } from '../../middleware/validate.js';
import type { AppDeps } from '../../deps.js';
import type { ApiRouter } from '../../http/api-router.js';
import { protocolRouter, requireProject, send } from './door.js';
import { deleteJsonBody } from './store-body.js';
import { storeFailure } from './store-errors.js';
import {
  deleteItem,
  getItem,
  itemResponse,
  listNamespaces,
  namespacesResponse,
  putItem,
  searchItems,
  searchResponse,
  type ListNamespacesBody,
  type PutItemBody,
  type SearchItemsBody,
} from './store-schemas.js';

type In<B, Q = Record<string, unknown>> = Validated<{ project_id: string }, Q, B>;

const toItem = (row: StoreItemRow) => ({
  namespace: row.namespace,
  key: row.key,
  value: row.value,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

/** The answer `null` as JSON with a 200, as the protocol answers a missing item. */
function sendNull(ctx: Context): void {
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = null;
}

/**
 * The Agent Protocol's store: the project's long-term memory (core/memory/),
 * the same items the agents' memory tools read and write.
 */
export function storeRoutes(deps: AppDeps): ApiRouter {
  const store = new MemoryStore({ db: deps.db, secrets: deps.secrets, policy: deps.metering });
  const router = protocolRouter('/store');

  router.route<In<PutItemBody>>(
    {
      method: 'put',
      path: '/items',
      summary: 'Put an item',
      description:
        "Creates or replaces the item. With the project's `store_embedding` set, the fields named by " +
        "`index` (or the project default, or the whole value) are embedded through the project's virtual key.",
      request: putItem,
    },
    async (ctx, { params, body }) => {
      await requireProject(deps.db, params.project_id);
      await storeFailure(store.put(params.project_id, body));
      send(ctx, null, 204);
    },
  );

  router.route<In<undefined, { namespace: string[]; key: string; refresh_ttl?: boolean }>>(
    {
      method: 'get',
      path: '/items',
      summary: 'Get an item',
      description: '`null` when there is no such item (or it expired).',
      request: getItem,
      response: itemResponse,
    },
    async (ctx, { params, query }) => {
      await requireProject(deps.db, params.project_id);
      const row = await store.get(params.project_id, query.namespace, query.key, query.refresh_ttl ?? true);
      if (row) send(ctx, toItem(row));
      else sendNull(ctx);
    },
  );

  router.route<In<{ namespace: string[]; key: string }>>(
    { method: 'delete', path: '/items', summary: 'Delete an item', request: deleteItem },
    async (ctx, { params, body }) => {
      await requireProject(deps.db, params.project_id);
      await store.delete(params.project_id, body.namespace, body.key);
      send(ctx, null, 204);
    },
    deleteJsonBody,
  );

  router.route<In<SearchItemsBody>>(
    {
      method: 'post',
      path: '/items/search',
      permission: 'project:read',
      summary: 'Search items',
      description:
        'Items under `namespace_prefix` matching `filter` (equality, or `$eq` `$ne` `$gt` `$gte` `$lt` `$lte` ' +
        '`$in` `$nin`). A `query` ranks by cosine similarity (`score`) when the project has a store ' +
        'embedding model, and otherwise keeps the items whose strings contain it (case-insensitive).',
      request: searchItems,
      response: searchResponse,
    },
    async (ctx, { params, body }) => {
      await requireProject(deps.db, params.project_id);
      const conditions = parseFilter(body.filter ?? undefined);
      if (!Array.isArray(conditions))
        throw ValidationError.field(`filter.${conditions.field}`, conditions.message, 'any.invalid');
      const rows = await storeFailure(
        store.search(params.project_id, {
          prefix: body.namespace_prefix,
          conditions,
          limit: body.limit,
          offset: body.offset,
          ...(body.query ? { query: body.query } : {}),
          refreshTtl: body.refresh_ttl ?? true,
        }),
      );
      send(ctx, { items: rows.map((r) => ({ ...toItem(r), score: r.score ?? null })) });
    },
  );

  router.route<In<ListNamespacesBody>>(
    {
      method: 'post',
      path: '/namespaces',
      permission: 'project:read',
      summary: 'List namespaces',
      description:
        '`prefix` and `suffix` take `*` for any label; `max_depth` cuts namespaces to that many labels.',
      request: listNamespaces,
      response: namespacesResponse,
    },
    async (ctx, { params, body }) => {
      await requireProject(deps.db, params.project_id);
      const namespaces = await store.listNamespaces(params.project_id, {
        ...(body.prefix ? { prefix: body.prefix } : {}),
        ...(body.suffix ? { suffix: body.suffix } : {}),
        ...(body.max_depth ? { maxDepth: body.max_depth } : {}),
        limit: body.limit,
        offset: body.offset,
      });
      send(ctx, { namespaces });
    },
  );

  return router;
}
