import type { Context } from 'koa';
import type { Db } from '../../core/db/knex.js';
import { recordAudit } from '../../core/audit/audit-log.js';
import type { Principal } from '../../core/auth/principal.js';
import type { ProjectRole } from '../../core/auth/roles.js';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { auditOrigin } from './audit-origin.js';

export interface ProjectMember {
  user_id: string;
  user_name: string;
  display_name: string | null;
  role: ProjectRole;
  created_at: string;
  updated_at: string;
}

interface MemberRow {
  user_id: string;
  user_name: string;
  display_name: string | null;
  role: ProjectRole;
  created_at: Date;
  updated_at: Date;
}

const memberView = (row: MemberRow): ProjectMember => ({
  ...row,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

/**
 * Who holds a role in a project, given directly (roles from groups are
 * configuration, AUTH_GROUP_ROLES, and show on the user's session instead).
 */
export class ProjectMembersService {
  constructor(private readonly db: Db) {}

  async list(projectId: string): Promise<ProjectMember[]> {
    await this.project(projectId);
    const rows = await this.members()
      .where('r.project_id', projectId)
      .orderBy('u.user_name')
      .select<MemberRow[]>();
    return rows.map(memberView);
  }

  async put(ctx: Context, actor: Principal, projectId: string, userId: string, role: ProjectRole) {
    await this.project(projectId);
    const user = await this.db('users').where({ id: userId }).first<{ id: string } | undefined>('id');
    if (!user) throw ValidationError.field('user_id', 'user_id must name an existing user', 'any.unknown');
    const before = await this.member(projectId, userId);
    await this.db('project_roles')
      .insert({ user_id: userId, project_id: projectId, role })
      .onConflict(['user_id', 'project_id'])
      .merge({ role, updated_at: this.db.fn.now() });
    const after = (await this.member(projectId, userId))!;
    await recordAudit(this.db, {
      actor,
      action: 'project_member.put',
      resourceType: 'project_member',
      resourceId: userId,
      projectId,
      before: before ?? undefined,
      after,
      status: 200,
      ...auditOrigin(ctx),
    });
    return after;
  }

  async delete(ctx: Context, actor: Principal, projectId: string, userId: string): Promise<void> {
    await this.project(projectId);
    const before = await this.member(projectId, userId);
    if (!before) throw new NotFoundError('project member');
    await this.db('project_roles').where({ project_id: projectId, user_id: userId }).delete();
    await recordAudit(this.db, {
      actor,
      action: 'project_member.delete',
      resourceType: 'project_member',
      resourceId: userId,
      projectId,
      before,
      status: 200,
      ...auditOrigin(ctx),
    });
  }

  private members() {
    return this.db('project_roles as r')
      .join('users as u', 'u.id', 'r.user_id')
      .column('r.user_id', 'u.user_name', 'u.display_name', 'r.role', 'r.created_at', 'r.updated_at');
  }

  private async member(projectId: string, userId: string): Promise<ProjectMember | undefined> {
    const row = await this.members()
      .where({ 'r.project_id': projectId, 'r.user_id': userId })
      .first<MemberRow | undefined>();
    return row ? memberView(row) : undefined;
  }

  private async project(id: string): Promise<void> {
    const found = await this.db('projects').where({ id }).first('id');
    if (!found) throw new NotFoundError('project');
  }
}
