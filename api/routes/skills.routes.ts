import type { Context, Next } from 'koa';
import type { AppDeps } from '../deps.js';
import { AppError, STATUS_MESSAGES, ValidationError } from '../../core/errors.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import { readRawBody } from '../http/raw-body.js';
import type { Validated } from '../middleware/validate.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/skills.schemas.js';
import { SKILL_LIMITS } from '../services/skill-files.js';
import { SkillsService } from '../services/skills.service.js';

type Id = { id: string };
type IdName = { id: string; name: string };
type OptScope = { project_id?: string };

const ZIP_TYPES = ['application/zip', 'application/x-zip-compressed', 'application/octet-stream'];

/** The zip bodies of uploads, read before validation (which sees `{}` for them). */
const zipBodies = new WeakMap<Context, Buffer>();

/** PUT takes JSON (parsed by the body parser) or a zip (read here, size-capped); anything else is 415. */
async function skillUploadBody(ctx: Context, next: Next): Promise<void> {
  const type = ctx.request.is('application/json', ...ZIP_TYPES);
  if (type === null)
    throw ValidationError.field(
      'body',
      'the request has no body: send a zip (Content-Type: application/zip) or JSON {"files": {...}}',
      'any.required',
    );
  if (type === false)
    throw new AppError(415, STATUS_MESSAGES[415]!, {
      field: 'content-type',
      reason: `a skill is uploaded as application/zip or application/json, not ${ctx.get('content-type')}`,
    });
  if (type !== 'application/json') zipBodies.set(ctx, await readRawBody(ctx, SKILL_LIMITS.archiveBytes));
  await next();
}

export function skillRoutes(deps: AppDeps): ApiRouter {
  const svc = new SkillsService(deps.db, { sandboxEnabled: deps.config.sandboxEnabled });
  return new ApiRouter('/api/agent-server/agents', 'Agents')
    .access({ read: 'project:read', write: 'project:develop', project: { table: 'agents' } })
    .route<Validated<IdName, OptScope, s.SkillPutBody>>(
      {
        method: 'put',
        path: '/:id/skills/:name',
        summary: "Create or replace one of an agent's skills",
        description:
          'The body is the skill folder: a zip (Content-Type: application/zip; one top folder is stripped) or ' +
          'JSON `{"files": {"<path>": "<utf-8 text>" | {"content", "encoding": "utf-8"|"base64", "executable"}}}`. ' +
          'SKILL.md must open with YAML front matter holding `name` (equal to the URL name) and `description`. ' +
          `Caps: ${SKILL_LIMITS.archiveBytes} bytes of zip (413 above), ${SKILL_LIMITS.totalBytes} bytes unpacked, ` +
          `${SKILL_LIMITS.files} files, ${SKILL_LIMITS.skillsPerAgent} skills per agent. No symlinks, absolute paths or "..". ` +
          "Mounted read-only at /sandbox/skills/<name>/ in the agent's sandboxes; `warnings` says when the agent has none.",
        request: s.skillPut,
        response: s.skillPutResponse,
        consumes: ['application/zip'],
      },
      async (ctx, { params, query, body }) => {
        const zip = zipBodies.get(ctx);
        const upload = zip ? { zip } : { files: body.files };
        ok(ctx, await svc.put(params.id, query.project_id, params.name, upload));
      },
      skillUploadBody,
    )
    .route<Validated<Id, OptScope & Page>>(
      {
        method: 'get',
        path: '/:id/skills',
        summary: "List an agent's skills",
        request: s.skillList,
        response: s.skillListResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await svc.list(params.id, query.project_id, query)),
    )
    .route<Validated<IdName, OptScope & { include?: 'files' }>>(
      {
        method: 'get',
        path: '/:id/skills/:name',
        summary: 'Get a skill: its files (paths and sizes) and SKILL.md; ?include=files adds every content',
        request: s.skillGet,
        response: s.skillDetailResponse,
      },
      async (ctx, { params, query }) =>
        ok(ctx, await svc.get(params.id, query.project_id, params.name, query.include === 'files')),
    )
    .route<Validated<IdName, OptScope>>(
      {
        method: 'delete',
        path: '/:id/skills/:name',
        summary: 'Delete a skill',
        request: s.skillDelete,
      },
      async (ctx, { params, query }) => {
        await svc.delete(params.id, query.project_id, params.name);
        ok(ctx, {});
      },
    );
}
