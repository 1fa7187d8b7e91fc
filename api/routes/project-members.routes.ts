import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import * as s from '../schemas/users.schemas.js';
import { ProjectMembersService } from '../services/project-members.service.js';

type Ids = { id: string; user_id: string };

/** Who holds which role in a project: read by its members, changed by its admins. */
export function projectMemberRoutes(deps: AppDeps): ApiRouter {
  const members = new ProjectMembersService(deps.db);
  return new ApiRouter('/api/agent-server/projects', 'Projects')
    .access({
      read: 'project:read',
      write: 'project:admin',
      project: { table: 'projects', projectColumn: 'id' },
    })
    .route<Validated<{ id: string }>>(
      {
        method: 'get',
        path: '/:id/members',
        summary: "List a project's members and their roles",
        request: s.memberList,
        response: s.memberListResponse,
      },
      async (ctx, { params }) => ok(ctx, await members.list(params.id)),
    )
    .route<Validated<Ids, never, s.MemberPutBody>>(
      {
        method: 'put',
        path: '/:id/members/:user_id',
        summary: 'Give a user a role in the project (or change it)',
        request: s.memberPut,
        response: s.memberResponse,
      },
      async (ctx, { params, body }) =>
        ok(ctx, await members.put(ctx, ctx.state.principal!, params.id, params.user_id, body.role)),
    )
    .route<Validated<Ids>>(
      {
        method: 'delete',
        path: '/:id/members/:user_id',
        summary: "Remove a user's role in the project",
        request: s.memberDelete,
      },
      async (ctx, { params }) => {
        await members.delete(ctx, ctx.state.principal!, params.id, params.user_id);
        ok(ctx, {});
      },
    );
}
