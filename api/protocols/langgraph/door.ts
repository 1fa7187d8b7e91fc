import Joi from 'joi';
import type { Context } from 'koa';
import type { Db } from '../../../core/db/knex.js';
import { NotFoundError } from '../../../core/errors.js';
import { ProjectsRepository } from '../../../core/repositories/projects.repository.js';
import { ApiRouter } from '../../http/api-router.js';
import { protocolAuth } from './auth.js';

/** The SDK's `apiUrl` is this, per project: `/api/langgraph/{project_id}`. */
export const LANGGRAPH_BASE = '/api/langgraph/:project_id';

export const PROTOCOL_TAG = 'Agent Protocol (LangGraph)';

/** A router of the Agent Protocol: its own answers and errors, ADMIN_TOKEN also as `x-api-key`. */
export const protocolRouter = (path = ''): ApiRouter =>
  new ApiRouter(LANGGRAPH_BASE + path, PROTOCOL_TAG, {
    guard: protocolAuth,
    raw: true,
    apiKeyHeader: 'x-api-key',
  }).access({ read: 'project:read', write: 'project:operate' });

/** Every route's `project_id` path parameter. */
export const projectParam = { project_id: Joi.string().guid().required() };

/** The Agent Protocol's bodies carry fields we do not use (and newer clients add more): they are accepted. */
export const protocolBody = (keys: Joi.PartialSchemaMap) => Joi.object(keys).unknown(true);

/** The project named in the path, or a 404 "Project not found". */
export async function requireProject(db: Db, projectId: string): Promise<void> {
  if (!(await new ProjectsRepository(db).exists(projectId))) throw new NotFoundError('project');
}

/** The answer as the Agent Protocol sends it: the bare object. */
export function send(ctx: Context, body: unknown, status = 200): void {
  ctx.status = status;
  ctx.body = body ?? null;
}
