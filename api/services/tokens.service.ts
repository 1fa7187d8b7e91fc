import type { Context } from 'koa';
import type { Db } from '../../core/db/knex.js';
import { recordAudit } from '../../core/audit/audit-log.js';
import type { Principal } from '../../core/auth/principal.js';
import {
  higherOrgRole,
  higherProjectRole,
  isOrgAdmin,
  type OrgRole,
  type ProjectRole,
} from '../../core/auth/roles.js';
import { credentialDigest, newCredential } from '../../core/auth/secrets.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../../core/errors.js';
import type { Page } from '../schemas/common.schemas.js';
import type { TokenCreateBody } from '../schemas/tokens.schemas.js';
import { auditOrigin } from './audit-origin.js';

/** How much of the secret is kept in clear: its kind's prefix and a few characters, to tell tokens apart. */
const SHOWN_PREFIX_LENGTH = 16;

interface TokenRow {
  id: string;
  name: string;
  kind: 'personal' | 'service';
  user_id: string | null;
  created_by: string | null;
  token_prefix: string;
  org_role: OrgRole | null;
  project_roles: Record<string, ProjectRole> | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

/** A token as the API shows one; `token_hash` is never selected. */
export interface TokenView {
  id: string;
  name: string;
  kind: 'personal' | 'service';
  user_id: string | null;
  created_by: string | null;
  token_prefix: string;
  org_role: OrgRole | null;
  project_roles: Record<string, ProjectRole> | null;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

const COLUMNS = [
  'id',
  'name',
  'kind',
  'user_id',
  'created_by',
  'token_prefix',
  'org_role',
  'project_roles',
  'expires_at',
  'revoked_at',
  'last_used_at',
  'created_at',
];

const iso = (d: Date | null) => d?.toISOString() ?? null;
const tokenView = (row: TokenRow): TokenView => ({
  ...row,
  expires_at: iso(row.expires_at),
  revoked_at: iso(row.revoked_at),
  last_used_at: iso(row.last_used_at),
  created_at: row.created_at.toISOString(),
});

const exceedsOrg = (asked: OrgRole, held: OrgRole) => higherOrgRole(asked, held) !== held;
const exceedsProject = (asked: ProjectRole, held: ProjectRole | undefined) =>
  held === undefined || higherProjectRole(asked, held) !== held;

/**
 * API tokens for automation: personal ones act as their user (never wider
 * than the user's roles), service ones belong to no person and are issued by
 * organisation admins. Only the secret's digest is stored; the secret is in
 * the create answer and nowhere else.
 */
export class TokensService {
  constructor(private readonly db: Db) {}

  /** The caller's personal tokens; for organisation admins, every service token too. */
  async list(actor: Principal, page: Page): Promise<TokenView[]> {
    const rows = await this.db('api_tokens')
      .where((q) => {
        q.where({ kind: 'personal', user_id: actor.userId ?? null });
        if (isOrgAdmin(actor.orgRole)) q.orWhere({ kind: 'service' });
      })
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .limit(page.limit)
      .offset(page.offset)
      .select<TokenRow[]>(COLUMNS);
    return rows.map(tokenView);
  }

  async create(
    ctx: Context,
    actor: Principal,
    body: TokenCreateBody,
  ): Promise<TokenView & { token: string }> {
    this.checkRoles(actor, body);
    const secret = newCredential(body.kind);
    const expiresAt = body.expires_in_days
      ? new Date(Date.now() + body.expires_in_days * 86_400_000)
      : body.expires_at
        ? new Date(body.expires_at)
        : null;
    const [row] = (await this.db('api_tokens')
      .insert({
        name: body.name,
        kind: body.kind,
        user_id: body.kind === 'personal' ? actor.userId : null,
        created_by: actor.userId ?? null,
        token_hash: credentialDigest(secret),
        token_prefix: secret.slice(0, SHOWN_PREFIX_LENGTH),
        org_role: body.org_role ?? null,
        project_roles: body.project_roles ? JSON.stringify(body.project_roles) : null,
        expires_at: expiresAt,
      })
      .returning(COLUMNS)) as [TokenRow];
    const view = tokenView(row);
    await recordAudit(this.db, {
      actor,
      action: 'token.create',
      resourceType: 'api_token',
      resourceId: row.id,
      after: view,
      status: 200,
      ...auditOrigin(ctx),
    });
    return { ...view, token: secret };
  }

  /** Revokes one of the caller's personal tokens, or (organisation admins) any token; revoking twice is harmless. */
  async revoke(ctx: Context, actor: Principal, id: string): Promise<TokenView> {
    const current = await this.db('api_tokens').where({ id }).first<TokenRow | undefined>(COLUMNS);
    const own = current?.kind === 'personal' && current.user_id === actor.userId;
    if (!current || (!own && !isOrgAdmin(actor.orgRole))) throw new NotFoundError('token');
    if (current.revoked_at) return tokenView(current);
    const [row] = (await this.db('api_tokens')
      .where({ id })
      .update({ revoked_at: this.db.fn.now() })
      .returning(COLUMNS)) as [TokenRow];
    const after = tokenView(row);
    await recordAudit(this.db, {
      actor,
      action: 'token.revoke',
      resourceType: 'api_token',
      resourceId: id,
      before: tokenView(current),
      after,
      status: 200,
      ...auditOrigin(ctx),
    });
    return after;
  }

  /**
   * A service token needs an organisation admin, and holds no more than they
   * do; a personal token belongs to a user and holds no more than the caller
   * (checked again on every use: a role taken from the user narrows the token).
   */
  private checkRoles(actor: Principal, body: TokenCreateBody): void {
    if (body.kind === 'service' && !isOrgAdmin(actor.orgRole))
      throw new ForbiddenError('a service token needs org:admin', { permission: 'org:admin', field: 'kind' });
    if (body.kind === 'personal' && !actor.userId)
      throw ValidationError.field('kind', 'only a user has personal tokens: issue a service token instead');
    if (body.org_role && exceedsOrg(body.org_role, actor.orgRole))
      throw ValidationError.field('org_role', `org_role cannot exceed your own (${actor.orgRole})`);
    if (isOrgAdmin(actor.orgRole)) return;
    for (const [projectId, role] of Object.entries(body.project_roles ?? {}))
      if (exceedsProject(role, actor.projects.get(projectId)))
        throw ValidationError.field(
          `project_roles.${projectId}`,
          `project_roles.${projectId} cannot exceed your own role in that project (${actor.projects.get(projectId) ?? 'none'})`,
        );
  }
}
