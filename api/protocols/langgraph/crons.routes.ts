import { NotFoundError } from '../../../core/errors.js';
import type { CronFilter } from '../../../core/repositories/crons.repository.js';
import type { AppDeps } from '../../deps.js';
import type { ApiRouter } from '../../http/api-router.js';
import type { Validated } from '../../middleware/validate.js';
import { CronsService, type CronCreate, type CronPatch } from '../../services/crons.service.js';
import * as s from './crons-schemas.js';
import { cronMessage, protocolCron, selected } from './crons-view.js';
import { protocolRouter, requireProject, send } from './door.js';

type ProjectP = { project_id: string };
type ThreadP = ProjectP & { thread_id: string };
type CronP = ProjectP & { cron_id: string };

const DESCRIPTION =
  'Each cron is a Temporal Schedule (`cron/<cron_id>`) that runs one turn of the agent per firing: ' +
  'on the thread, or on a new thread each time. `timezone` (IANA, default UTC) and `overlap_policy` ' +
  '(skip, buffer_one, buffer_all, cancel_other, terminate_other, allow_all; default skip) are ours.';

/** The fields a create or an update shares, as the service takes them. */
function fieldsOf(body: s.CronUpdateBody): CronPatch {
  return {
    ...(body.schedule !== undefined ? { schedule: body.schedule } : {}),
    ...(body.timezone != null ? { timezone: body.timezone } : {}),
    ...(body.end_time !== undefined
      ? { endTime: body.end_time === null ? null : new Date(body.end_time) }
      : {}),
    ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
    ...(body.overlap_policy !== undefined ? { overlapPolicy: body.overlap_policy } : {}),
    ...(body.on_run_completed != null ? { onRunCompleted: body.on_run_completed } : {}),
    ...(body.enabled != null ? { enabled: body.enabled } : {}),
    ...(body.input !== undefined ? { message: cronMessage(body.input) } : {}),
    ...(body.input !== undefined || body.context != null || body.config != null
      ? {
          payload: {
            ...(body.input !== undefined ? { input: body.input } : {}),
            ...(body.context != null ? { context: body.context } : {}),
            ...(body.config != null ? { config: body.config } : {}),
          },
        }
      : {}),
  };
}

/** The Agent Protocol's crons: scheduled runs of an assistant, on a thread or stateless. */
export function cronsRoutes(deps: AppDeps): ApiRouter {
  const crons = new CronsService(deps);
  const view = (row: Parameters<typeof protocolCron>[0]) => protocolCron(row, deps.config);

  async function create(projectId: string, body: s.CronCreateBody, threadId?: string) {
    await requireProject(deps.db, projectId);
    // `input` is required on create, so the fields carry its message and payload.
    const fields = fieldsOf(body);
    const c: CronCreate = {
      ...fields,
      assistant: body.assistant_id,
      threadId,
      schedule: body.schedule,
      message: fields.message ?? cronMessage(body.input),
      payload: fields.payload ?? { input: body.input },
    };
    return view(await crons.create(projectId, c));
  }

  /** The search's filter; undefined when the assistant named does not exist (nothing matches). */
  async function filterOf(projectId: string, body: s.CronCountBody): Promise<CronFilter | undefined> {
    await requireProject(deps.db, projectId);
    let agentId: string | undefined;
    if (body.assistant_id != null) {
      try {
        agentId = await crons.resolveAgent(projectId, body.assistant_id);
      } catch (err) {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      }
    }
    return {
      projectId,
      ...(agentId ? { agentId } : {}),
      ...(body.thread_id != null ? { conversationId: body.thread_id } : {}),
      ...(body.enabled != null ? { enabled: body.enabled } : {}),
      ...(body.metadata ? { metadata: body.metadata } : {}),
    };
  }

  return protocolRouter()
    .route<Validated<ProjectP, never, s.CronCreateBody>>(
      {
        method: 'post',
        path: '/runs/crons',
        permission: 'project:develop',
        summary: 'Create a stateless cron (each run on a new thread)',
        description: DESCRIPTION,
        request: { params: s.projectOnly, body: s.cronCreate },
        response: s.cronResponse,
      },
      async (ctx, { params, body }) => send(ctx, await create(params.project_id, body)),
    )
    .route<Validated<ThreadP, never, s.CronCreateBody>>(
      {
        method: 'post',
        path: '/threads/:thread_id/runs/crons',
        permission: 'project:develop',
        summary: 'Create a cron on a thread (each run a turn of that thread)',
        description: DESCRIPTION,
        request: { params: s.threadParams, body: s.cronCreate },
        response: s.cronResponse,
      },
      async (ctx, { params, body }) => send(ctx, await create(params.project_id, body, params.thread_id)),
    )
    .route<Validated<ProjectP, never, s.CronSearchBody>>(
      {
        method: 'post',
        path: '/runs/crons/search',
        permission: 'project:read',
        summary: 'Search crons by assistant, thread, metadata or enabled',
        request: { params: s.projectOnly, body: s.cronSearch },
      },
      async (ctx, { params, body }) => {
        const filter = await filterOf(params.project_id, body);
        const rows = filter
          ? await crons.search(
              filter,
              { limit: body.limit, offset: body.offset },
              { by: body.sort_by, order: body.sort_order },
            )
          : [];
        send(
          ctx,
          rows.map((r) => selected(view(r), body.select)),
        );
      },
    )
    .route<Validated<ProjectP, never, s.CronCountBody>>(
      {
        method: 'post',
        path: '/runs/crons/count',
        permission: 'project:read',
        summary: 'Count crons by assistant, thread, metadata or enabled',
        request: { params: s.projectOnly, body: s.cronCount },
      },
      async (ctx, { params, body }) => {
        const filter = await filterOf(params.project_id, body);
        send(ctx, filter ? await crons.count(filter) : 0);
      },
    )
    .route<Validated<CronP, never, s.CronUpdateBody>>(
      {
        method: 'patch',
        path: '/runs/crons/:cron_id',
        permission: 'project:develop',
        summary: 'Update a cron (schedule, timezone, end_time, input, metadata, enabled, overlap_policy)',
        request: { params: s.cronParams, body: s.cronUpdate },
        response: s.cronResponse,
      },
      async (ctx, { params, body }) => {
        await requireProject(deps.db, params.project_id);
        send(ctx, view(await crons.update(params.cron_id, params.project_id, fieldsOf(body))));
      },
    )
    .route<Validated<CronP>>(
      {
        method: 'delete',
        path: '/runs/crons/:cron_id',
        permission: 'project:develop',
        summary: 'Delete a cron and its schedule',
        request: { params: s.cronParams },
      },
      async (ctx, { params }) => {
        await requireProject(deps.db, params.project_id);
        await crons.delete(params.cron_id, params.project_id);
        send(ctx, null, 204);
      },
    );
}
