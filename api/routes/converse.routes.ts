import { once } from 'node:events';
import type { Context } from 'koa';
import type { RunEvent } from '../../core/repositories/run-events.repository.js';
import type { AppDeps } from '../deps.js';
import { ValidationError } from '../../core/errors.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import { openEventStream } from '../http/sse.js';
import type { Validated } from '../middleware/validate.js';
import * as s from '../schemas/converse.schemas.js';
import { ConverseService } from '../services/converse.service.js';
import { RunEventsHub } from '../services/run-events-hub.js';

const KEEPALIVE_MS = 15_000;
/** A converse stream ends when the turn pauses for approval (it may resume days later). */
const PAUSED: ReadonlySet<string> = new Set(['run.paused']);

/** Each event as one SSE frame: `id:` is the run's event number, `data:` the bare payload. */
const frame = (ev: RunEvent) => `id: ${ev.seq}\nevent: ${ev.type}\ndata: ${JSON.stringify(ev.data)}\n\n`;

/**
 * Streams a run's events to the client until the run ends. A client that
 * leaves stops only its own stream: the turn goes on in its workflow.
 */
async function streamRun(
  ctx: Context,
  service: ConverseService,
  runId: string,
  afterSeq: number,
  /** Event types after which the stream ends (besides the run's end). */
  stopAt: ReadonlySet<string> = new Set(),
): Promise<void> {
  // Headers set so far (X-Request-Id, X-Trace-Id) are already on the response.
  const res = openEventStream(ctx);
  const controller = new AbortController();
  const gone = () => controller.abort();
  res.once('close', gone);
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  try {
    for await (const ev of service.events(runId, afterSeq, controller.signal)) {
      if (!res.write(frame(ev))) await once(res, 'drain', { signal: controller.signal });
      if (stopAt.has(ev.type)) break;
    }
  } catch (err) {
    if (!controller.signal.aborted) ctx.state.log.error({ err, runId }, 'run event stream failed');
  } finally {
    clearInterval(keepalive);
    res.off('close', gone);
    if (!res.destroyed) res.end();
  }
}

function wantsStream(ctx: Context, body: s.ConverseBody): boolean {
  if (body.stream !== undefined) return body.stream;
  return /\btext\/event-stream\b/.test(ctx.get('accept'));
}

/** POST /converse, and the runs it creates. */
export function converseRoutes(deps: AppDeps): ApiRouter[] {
  const service = new ConverseService(deps, new RunEventsHub(deps.db, deps.changes));

  const converse = new ApiRouter('/api/agent-server/converse', 'Converse')
    .access({ read: 'project:read', write: 'project:operate' })
    .route<Validated<never, { project_id: string }, s.ConverseBody>>(
      {
        method: 'post',
        path: '/',
        summary: 'Send a message to an agent: one turn of its session',
        description:
          'Stores the message, runs the turn in the session workflow and answers with the run. With `stream: true` ' +
          '(or `Accept: text/event-stream`) the answer is Server-Sent Events: `run.created`, `message.delta {text}`, ' +
          '`tool_call.created`, `tool_call.completed`, `message.completed`, then `run.completed {usage}` or ' +
          '`run.failed {error}`, each with an `id:`; resume with GET /runs/{run_id}/events. A failed turn is still a ' +
          '200 with `status: failed`. The same `message_id` again returns the same run; with a different message, 409. ' +
          'When the model calls a tool that needs approval, the turn pauses: the answer (or the stream, after ' +
          '`run.paused {pending}`) ends with `status: awaiting_approval` and `pending_approvals`; decide with ' +
          'POST /runs/{run_id}/approvals and follow GET /runs/{run_id}/events.',
        request: s.converseRequest,
        response: s.converseResponse,
      },
      async (ctx, { query, body }) => {
        const traceId = ctx.response.get('X-Trace-Id') || undefined;
        const { run, webhookSecret } = await service.submit(query.project_id, body, traceId);
        if (wantsStream(ctx, body)) {
          if (webhookSecret) ctx.set('Webhook-Secret', webhookSecret);
          return streamRun(ctx, service, run.id, 0, PAUSED);
        }
        await service.wait(run.id, deps.config.session.converseWaitTimeoutMs);
        const view = await service.view(run.id);
        ok(ctx, webhookSecret ? { ...view, webhook_secret: webhookSecret } : view);
      },
    );

  const runs = new ApiRouter('/api/agent-server/runs', 'Converse')
    .access({ read: 'project:read', write: 'project:operate' })
    .route<Validated<{ run_id: string }, { project_id?: string }>>(
      {
        method: 'get',
        path: '/:run_id',
        summary: "A run's status and result, also after its client left",
        request: s.runGet,
        response: s.runResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await service.view(params.run_id, query.project_id)),
    )
    .route<Validated<{ run_id: string }, { project_id?: string; after?: number }>>(
      {
        method: 'get',
        path: '/:run_id/events',
        summary: "Replay and follow a run's events (Server-Sent Events)",
        description:
          'Every event of the run after `Last-Event-ID` (or `?after=`), then live ones until the run ends. Works on any replica.',
        request: s.runEvents,
        produces: 'text/event-stream',
      },
      async (ctx, { params, query }) => {
        await service.view(params.run_id, query.project_id); // 404 before the stream starts
        const header = ctx.get('last-event-id');
        let after = query.after ?? 0;
        if (header) {
          if (!/^\d{1,9}$/.test(header))
            throw ValidationError.field(
              'Last-Event-ID',
              'Last-Event-ID must be an event id (a whole number)',
              'number.base',
            );
          after = Number(header);
        }
        await streamRun(ctx, service, params.run_id, after);
      },
    )
    .route<Validated<{ run_id: string }, { project_id?: string }, s.ApprovalsBody>>(
      {
        method: 'post',
        path: '/:run_id/approvals',
        summary: "Approve or decline a paused run's tool calls",
        description:
          'For a run with `status: awaiting_approval`: the listed calls run (approved) or answer the model ' +
          '"declined by user" (rejected). Calls not listed keep waiting; once every pending call is decided the turn ' +
          'goes on (`run.resumed`). Works minutes or days later, after any restart. 409 when the run is not awaiting ' +
          'approval or a call was already decided; 400 naming calls that are not pending. With `wait: true` the ' +
          'answer comes when the turn has ended or paused again.',
        request: s.runApprovals,
        response: s.runResponse,
      },
      async (ctx, { params, query, body }) => {
        const outcome = await service.approve(params.run_id, query.project_id, body);
        if (body.wait && outcome.status === 'running')
          await service.wait(params.run_id, deps.config.session.converseWaitTimeoutMs, outcome.afterSeq);
        // The Update returns once the decisions are stored (and the run resumed, when none waits).
        ok(ctx, await service.view(params.run_id, query.project_id));
      },
    );
  return [converse, runs];
}
