import { randomUUID } from 'node:crypto';
import { isUniqueViolation, NotFoundError } from '../../../core/errors.js';
import type { ThreadRow } from '../../../core/repositories/protocol-threads.repository.js';
import type { AppDeps } from '../../deps.js';
import type { ApiRouter } from '../../http/api-router.js';
import type { Validated } from '../../middleware/validate.js';
import { protocolRouter, requireProject, send } from './door.js';
import { ProtocolError } from './errors.js';
import { STATELESS_NAMESPACE } from './runs.service.js';
import type { DoorServices } from './services.js';
import * as s from './threads.schemas.js';

type P = s.ThreadParams;
type BeforeConfig = { checkpoint_id?: string; configurable?: { checkpoint_id?: string } };

/** The Agent Protocol's threads: our conversations. */
export function threadsRoutes(deps: AppDeps, door: DoorServices): ApiRouter {
  const { repo, views } = door;

  async function threadOf(p: P): Promise<ThreadRow> {
    const thread = await repo.find(p.project_id, p.thread_id);
    if (!thread) {
      await requireProject(deps.db, p.project_id);
      throw new NotFoundError('thread');
    }
    return thread;
  }

  async function stateAt(p: P, checkpointId: string) {
    const thread = await threadOf(p);
    const all = await views.history(thread, Number.MAX_SAFE_INTEGER);
    const found = all.find((st) => st.checkpoint.checkpoint_id === checkpointId);
    if (!found) throw new ProtocolError(404, 'Checkpoint not found');
    return found;
  }

  return protocolRouter()
    .route<
      Validated<P, never, { thread_id?: string; metadata?: Record<string, unknown>; if_exists: string }>
    >(
      {
        method: 'post',
        path: '/threads',
        summary: 'Create a thread (a conversation)',
        request: { params: s.projectOnly, body: s.threadCreate },
        response: s.threadResponse,
      },
      async (ctx, { params, body }) => {
        await requireProject(deps.db, params.project_id);
        const id = body.thread_id ?? randomUUID();
        try {
          await repo.insert({ project_id: params.project_id, id, metadata: body.metadata ?? {} });
        } catch (err) {
          if (!isUniqueViolation(err)) throw err;
          if (body.if_exists !== 'do_nothing') throw new ProtocolError(409, `Thread ${id} already exists`);
        }
        send(ctx, await views.thread(await threadOf({ ...params, thread_id: id })));
      },
    )
    .route<Validated<P, never, s.ThreadSearchBody>>(
      {
        method: 'post',
        path: '/threads/search',
        permission: 'project:read',
        summary: 'Search threads by metadata (containment), status or ids',
        request: { params: s.projectOnly, body: s.threadSearch },
      },
      async (ctx, { params, body }) => {
        await requireProject(deps.db, params.project_id);
        const by = body.sort_by === 'state_updated_at' ? 'updated_at' : body.sort_by;
        const rows = await repo.search(
          params.project_id,
          { metadata: body.metadata, status: body.status, ids: body.ids, notNamespace: STATELESS_NAMESPACE },
          { by, order: body.sort_order },
          { limit: body.limit, offset: body.offset },
        );
        send(ctx, await Promise.all(rows.map((t) => views.thread(t))));
      },
    )
    .route<Validated<P, never, Omit<s.ThreadSearchBody, 'limit' | 'offset' | 'sort_by' | 'sort_order'>>>(
      {
        method: 'post',
        path: '/threads/count',
        permission: 'project:read',
        summary: 'Count threads',
        request: { params: s.projectOnly, body: s.threadCount },
      },
      async (ctx, { params, body }) => {
        await requireProject(deps.db, params.project_id);
        const filter = { metadata: body.metadata, status: body.status, notNamespace: STATELESS_NAMESPACE };
        send(ctx, await repo.count(params.project_id, filter));
      },
    )
    .route<Validated<P>>(
      {
        method: 'get',
        path: '/threads/:thread_id',
        summary: 'A thread, with its values and interrupts',
        request: { params: s.threadParams },
        response: s.threadResponse,
      },
      async (ctx, { params }) => send(ctx, await views.thread(await threadOf(params))),
    )
    .route<Validated<P, never, { metadata?: Record<string, unknown> }>>(
      {
        method: 'patch',
        path: '/threads/:thread_id',
        summary: "Merge metadata into a thread's",
        request: { params: s.threadParams, body: s.threadPatch },
        response: s.threadResponse,
      },
      async (ctx, { params, body }) => {
        const thread = await threadOf(params);
        if (body.metadata) await repo.mergeMetadata(thread.pk, body.metadata);
        send(ctx, await views.thread(await threadOf(params)));
      },
    )
    .route<Validated<P>>(
      {
        method: 'delete',
        path: '/threads/:thread_id',
        summary: 'Delete a thread: the conversation, its sessions and everything they stored',
        request: { params: s.threadParams },
      },
      async (ctx, { params }) => {
        await threadOf(params);
        await door.conversations.delete(params.thread_id, params.project_id);
        send(ctx, null, 204);
      },
    )
    .route<Validated<P>>(
      {
        method: 'post',
        path: '/threads/:thread_id/copy',
        summary: 'Copy a thread (a fork of the conversation: its transcript and workspace)',
        request: { params: s.threadParams },
        response: s.threadResponse,
      },
      async (ctx, { params }) => {
        const source = await threadOf(params);
        const copy = await door.forks.fork(params.thread_id, params.project_id, {});
        await repo.mergeMetadata(copy.pk, source.metadata ?? {});
        send(ctx, await views.thread(await threadOf({ ...params, thread_id: copy.id })));
      },
    )
    .route<Validated<P>>(
      {
        method: 'get',
        path: '/threads/:thread_id/state',
        summary: "A thread's state: values, next, tasks (with interrupts) and checkpoint",
        request: { params: s.threadParams, query: s.historyQuery },
        response: s.threadStateResponse,
      },
      async (ctx, { params }) => send(ctx, await views.state(await threadOf(params))),
    )
    .route<Validated<P & { checkpoint_id: string }>>(
      {
        method: 'get',
        path: '/threads/:thread_id/state/:checkpoint_id',
        summary: "A thread's state at a checkpoint",
        request: { params: s.checkpointParams, query: s.historyQuery },
        response: s.threadStateResponse,
      },
      async (ctx, { params }) => send(ctx, await stateAt(params, params.checkpoint_id)),
    )
    .route<Validated<P, never, { checkpoint: { checkpoint_id: string } }>>(
      {
        method: 'post',
        path: '/threads/:thread_id/state/checkpoint',
        permission: 'project:read',
        summary: "A thread's state at a checkpoint",
        request: { params: s.threadParams, body: s.stateCheckpointBody },
        response: s.threadStateResponse,
      },
      async (ctx, { params, body }) => send(ctx, await stateAt(params, body.checkpoint.checkpoint_id)),
    )
    .route<Validated<P, { limit: number; before?: string }>>(
      {
        method: 'get',
        path: '/threads/:thread_id/history',
        summary: "A thread's past states, newest first: after each turn's input and after its answer",
        request: { params: s.threadParams, query: s.historyQuery },
      },
      async (ctx, { params, query }) =>
        send(ctx, await views.history(await threadOf(params), query.limit, query.before)),
    )
    .route<Validated<P, never, { limit: number; before?: string | BeforeConfig }>>(
      {
        method: 'post',
        path: '/threads/:thread_id/history',
        permission: 'project:read',
        summary: "A thread's past states, newest first",
        request: { params: s.threadParams, body: s.historyBody },
      },
      async (ctx, { params, body }) => {
        const before =
          typeof body.before === 'string'
            ? body.before
            : (body.before?.configurable?.checkpoint_id ?? body.before?.checkpoint_id);
        send(ctx, await views.history(await threadOf(params), body.limit, before));
      },
    );
}
