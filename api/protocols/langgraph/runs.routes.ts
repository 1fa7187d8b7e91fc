import type { Context } from 'koa';
import type { AppDeps } from '../../deps.js';
import type { ApiRouter } from '../../http/api-router.js';
import type { Validated } from '../../middleware/validate.js';
import { LANGGRAPH_BASE, protocolRouter, requireProject, send } from './door.js';
import { ProtocolError } from './errors.js';
import { streamProtocolRun } from './run-sse.js';
import * as s from './runs.schemas.js';
import { ourStatuses, ProtocolRuns, runView, streamModes, type Started } from './runs.service.js';
import type { DoorServices } from './services.js';

type ThreadP = { project_id: string; thread_id: string };
type RunP = s.RunParams;

/** Where a created run can be read again (the SDK takes its ids from this header). */
function location(ctx: Context, projectId: string, started: Started, stateless: boolean): void {
  const base = LANGGRAPH_BASE.replace(':project_id', projectId);
  const path = stateless ? `/runs/${started.run.id}` : `/threads/${started.thread.id}/runs/${started.run.id}`;
  ctx.set('Content-Location', base + path);
  if (started.webhookSecret) ctx.set('Webhook-Secret', started.webhookSecret);
}

/** The Agent Protocol's runs: converse turns on the thread's conversation. */
export function runsRoutes(
  deps: AppDeps,
  door: DoorServices,
  later?: (runId: string, s: number) => Promise<void>,
): ApiRouter {
  const runs = new ProtocolRuns(deps, door, later);
  const traceOf = (ctx: Context) => ctx.response.get('X-Trace-Id') || undefined;

  async function create(
    ctx: Context,
    projectId: string,
    threadId: string | undefined,
    body: s.RunCreateBody,
  ) {
    const started = await runs.create(projectId, threadId, body, traceOf(ctx));
    location(ctx, projectId, started, threadId === undefined);
    return started;
  }

  async function stream(
    ctx: Context,
    projectId: string,
    threadId: string | undefined,
    body: s.RunCreateBody,
  ) {
    const started = await create(ctx, projectId, threadId, body);
    await streamProtocolRun(ctx, door, {
      projectId,
      runId: started.run.id,
      thread: started.thread,
      assistantId: body.assistant_id,
      modes: streamModes(body.stream_mode),
      afterSeq: started.afterSeq,
      cancelOnDisconnect: body.on_disconnect === 'cancel',
      headers: {
        'content-location': ctx.response.get('Content-Location'),
        // Relative to the SDK's apiUrl: where it reconnects (with Last-Event-ID) when the stream drops.
        ...(threadId !== undefined
          ? { location: `/threads/${started.thread.id}/runs/${started.run.id}/stream` }
          : {}),
        ...(started.webhookSecret ? { 'webhook-secret': started.webhookSecret } : {}),
      },
    });
  }

  async function wait(ctx: Context, projectId: string, threadId: string | undefined, body: s.RunCreateBody) {
    const started = await create(ctx, projectId, threadId, body);
    send(ctx, await runs.waitFor(projectId, started));
  }

  const router = protocolRouter();
  const createSpec = (path: string, summary: string, produces?: string) => ({
    method: 'post' as const,
    path,
    summary,
    ...(produces ? { produces } : { response: s.runResponse }),
  });

  router
    .route<Validated<ThreadP, never, s.RunCreateBody>>(
      {
        ...createSpec('/threads/:thread_id/runs', 'Start a run in the background'),
        description:
          "One turn of the assistant's agent on the thread's conversation, or (`command.resume`) the decision on " +
          'the run waiting there. `multitask_strategy` reject (422 while a run is unfinished; nothing stored) / ' +
          'enqueue / interrupt / rollback.',
        request: { params: s.threadParams, body: s.runCreate },
      },
      async (ctx, { params, body }) => {
        const started = await create(ctx, params.project_id, params.thread_id, body);
        send(ctx, runView(started.run, started.thread.id));
      },
    )
    .route<Validated<ThreadP, never, s.RunCreateBody>>(
      {
        ...createSpec('/threads/:thread_id/runs/stream', 'Start a run and stream it', 'text/event-stream'),
        request: { params: s.threadParams, body: s.runCreate },
      },
      async (ctx, { params, body }) => stream(ctx, params.project_id, params.thread_id, body),
    )
    .route<Validated<ThreadP, never, s.RunCreateBody>>(
      {
        ...createSpec(
          '/threads/:thread_id/runs/wait',
          "Start a run and answer the thread's values when it stops",
        ),
        request: { params: s.threadParams, body: s.runCreate },
      },
      async (ctx, { params, body }) => wait(ctx, params.project_id, params.thread_id, body),
    )
    .route<Validated<ThreadP, { limit: number; offset: number; status?: string }>>(
      {
        method: 'get',
        path: '/threads/:thread_id/runs',
        summary: "A thread's runs, newest first (rolled-back runs are gone)",
        request: { params: s.threadParams, query: s.listQuery },
      },
      async (ctx, { params, query }) => {
        const thread = await door.repo.find(params.project_id, params.thread_id);
        if (!thread) throw new ProtocolError(404, 'Thread not found');
        const rows = await door.repo.runs(thread.pk, { status: ourStatuses(query.status) }, query);
        send(
          ctx,
          rows.map((r) => runView(r, thread.id)),
        );
      },
    )
    .route<Validated<RunP>>(
      {
        method: 'get',
        path: '/threads/:thread_id/runs/:run_id',
        summary: 'A run',
        request: { params: s.runParams },
        response: s.runResponse,
      },
      async (ctx, { params }) => {
        const run = await runs.find(params.project_id, params.thread_id, params.run_id);
        send(ctx, runView(run, run.conversation_id));
      },
    )
    .route<Validated<RunP>>(
      {
        method: 'delete',
        path: '/threads/:thread_id/runs/:run_id',
        summary: 'Forget an ended run in this protocol (our own API keeps its record)',
        request: { params: s.runParams },
      },
      async (ctx, { params }) => {
        const run = await runs.find(params.project_id, params.thread_id, params.run_id);
        if (!['completed', 'failed', 'cancelled'].includes(run.status))
          throw new ProtocolError(409, 'The run has not ended: cancel it first');
        await door.repo.forgetRun(run.id);
        send(ctx, null, 204);
      },
    )
    .route<Validated<RunP>>(
      {
        method: 'get',
        path: '/threads/:thread_id/runs/:run_id/join',
        summary: "Wait for a run to stop; the thread's values",
        request: { params: s.runParams },
      },
      async (ctx, { params }) =>
        send(ctx, await runs.join(params.project_id, params.thread_id, params.run_id)),
    )
    .route<Validated<RunP, { cancel_on_disconnect: boolean; stream_mode?: s.StreamMode | s.StreamMode[] }>>(
      {
        method: 'get',
        path: '/threads/:thread_id/runs/:run_id/stream',
        summary: "Join a run's stream (Last-Event-ID resumes after that event; -1 replays from the first)",
        request: { params: s.runParams, query: s.joinStreamQuery },
        produces: 'text/event-stream',
      },
      async (ctx, { params, query }) => {
        const run = await runs.find(params.project_id, params.thread_id, params.run_id);
        const thread = (await door.repo.find(params.project_id, run.conversation_id))!;
        await streamProtocolRun(ctx, door, {
          projectId: params.project_id,
          runId: run.id,
          thread,
          assistantId: run.protocol?.assistant_id ?? run.agent_id ?? '',
          modes: query.stream_mode
            ? streamModes(query.stream_mode)
            : ((run.protocol?.stream_mode as s.StreamMode[]) ?? ['values']),
          afterSeq: 0,
          lastEventId: ctx.get('last-event-id') || undefined,
          cancelOnDisconnect: query.cancel_on_disconnect,
          headers: { location: `/threads/${thread.id}/runs/${run.id}/stream` },
        });
      },
    )
    .route<Validated<RunP, { wait: boolean; action: 'interrupt' | 'rollback' }>>(
      {
        method: 'post',
        path: '/threads/:thread_id/runs/:run_id/cancel',
        summary:
          'Cancel a run: interrupt keeps what it produced, rollback removes it (and the run is gone here)',
        request: { params: s.runParams, query: s.cancelQuery },
      },
      async (ctx, { params, query }) => {
        const run = await runs.find(params.project_id, params.thread_id, params.run_id);
        await door.cancels.cancel(run.id, params.project_id, query.action);
        if (query.wait) await door.converse.wait(run.id, deps.config.session.converseWaitTimeoutMs);
        send(ctx, null, query.wait ? 204 : 202);
      },
    );

  router
    .route<Validated<{ project_id: string }, never, s.RunCreateBody>>(
      {
        ...createSpec('/runs', 'Start a stateless run (a throwaway thread) in the background'),
        request: { params: s.projectOnly, body: s.runCreate },
      },
      async (ctx, { params, body }) => {
        const started = await create(ctx, params.project_id, undefined, body);
        send(ctx, runView(started.run, started.thread.id));
      },
    )
    .route<Validated<{ project_id: string }, never, s.RunCreateBody>>(
      {
        ...createSpec('/runs/stream', 'Start a stateless run and stream it', 'text/event-stream'),
        request: { params: s.projectOnly, body: s.runCreate },
      },
      async (ctx, { params, body }) => stream(ctx, params.project_id, undefined, body),
    )
    .route<Validated<{ project_id: string }, never, s.RunCreateBody>>(
      {
        ...createSpec('/runs/wait', 'Start a stateless run and answer its values when it stops'),
        request: { params: s.projectOnly, body: s.runCreate },
      },
      async (ctx, { params, body }) => wait(ctx, params.project_id, undefined, body),
    )
    .route<Validated<{ project_id: string }, never, s.RunCreateBody[]>>(
      {
        ...createSpec('/runs/batch', 'Start several stateless runs in the background'),
        request: { params: s.projectOnly, body: s.runBatch },
      },
      async (ctx, { params, body }) => {
        await requireProject(deps.db, params.project_id);
        const out = [];
        for (const item of body) {
          const started = await runs.create(params.project_id, undefined, item, traceOf(ctx));
          out.push(runView(started.run, started.thread.id));
        }
        send(ctx, out);
      },
    );
  return router;
}
