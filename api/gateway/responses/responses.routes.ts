import type Router from '@koa/router';
import type { Context } from 'koa';
import type { DbGatewayResponse } from '../../../core/db/tables/index.js';
import { invalidField } from '../errors.js';
import { presentedSecret } from '../gateway-call.js';
import type { KeyResolver } from '../keys.js';
import type { Surface } from '../surface.js';
import { ResponseNotFoundError } from '../surfaces/responses/errors.js';
import type { ResponsesStore } from './store.js';

/** The response object as its POST answered it (the row's columns and the rest of it). */
function responseOf(row: DbGatewayResponse): Record<string, unknown> {
  return {
    id: row.id,
    object: 'response',
    created_at: Math.floor(row.created_at.getTime() / 1000),
    status: row.status,
    ...row.response,
    model: row.model,
    output: row.output_items,
    usage: row.usage,
  };
}

/** The path's response id (the router has percent-decoded it). */
const idOf = (ctx: Context): string => (ctx.params as Record<string, string>).id ?? '';

function queryString(ctx: Context, name: string): string | undefined {
  const v = ctx.query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw invalidField(name, `Invalid '${name}': give it once.`);
  return v;
}

/** `limit` (1–100, default 20), `order` (desc by default, as OpenAI), `after` (an item id). */
function page(ctx: Context): { limit: number; order: 'asc' | 'desc'; after: string | undefined } {
  const rawLimit = queryString(ctx, 'limit');
  const limit = rawLimit === undefined ? 20 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw invalidField('limit', "Invalid 'limit': expected an integer from 1 to 100.");
  const order = queryString(ctx, 'order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc')
    throw invalidField('order', "Invalid 'order': expected asc or desc.");
  return { limit, order, after: queryString(ctx, 'after') };
}

/**
 * `GET`, `DELETE /v1/responses/{id}` and `GET /v1/responses/{id}/input_items`,
 * authenticated by the virtual key like every gateway call. A response that
 * is not this key's (or is gone) is a 404, whoever stored it.
 */
export function mountResponsesRoutes(
  router: Router,
  keys: KeyResolver,
  surface: Surface,
  store: ResponsesStore,
): void {
  const keyOf = (ctx: Context) => keys.authenticate(presentedSecret(ctx, surface));
  const stored = async (ctx: Context) => {
    const id = idOf(ctx);
    const row = await store.find(id, (await keyOf(ctx)).id);
    if (!row) throw new ResponseNotFoundError(id);
    return row;
  };

  router.get('/openai/v1/responses/:id', async (ctx) => {
    if (queryString(ctx, 'stream') === 'true')
      throw invalidField(
        'stream',
        'Replaying a stored response as a stream (stream=true) is not supported by this gateway.',
      );
    ctx.body = responseOf(await stored(ctx));
  });

  router.delete('/openai/v1/responses/:id', async (ctx) => {
    const id = idOf(ctx);
    if (!(await store.delete(id, (await keyOf(ctx)).id))) throw new ResponseNotFoundError(id);
    ctx.body = { id, object: 'response.deleted', deleted: true };
  });

  router.get('/openai/v1/responses/:id/input_items', async (ctx) => {
    const { limit, order, after } = page(ctx);
    const items = (await stored(ctx)).input_items as Array<{ id: string }>;
    const ordered = order === 'asc' ? items : [...items].reverse();
    const from = after === undefined ? 0 : ordered.findIndex((it) => it.id === after) + 1;
    if (after !== undefined && from === 0)
      throw invalidField('after', `Invalid 'after': no input item ${JSON.stringify(after)}.`);
    const data = ordered.slice(from, from + limit);
    ctx.body = {
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data[data.length - 1]?.id ?? null,
      has_more: from + limit < ordered.length,
    };
  });
}
