import type { Db } from '../db/knex.js';
import type { GroupGrant } from '../config/config-types.js';
import type { Principal } from './principal.js';
import {
  higherOrgRole,
  higherProjectRole,
  lowerOrgRole,
  lowerProjectRole,
  type OrgRole,
  type ProjectRole,
} from './roles.js';
import { CREDENTIAL_PREFIX, credentialDigest } from './secrets.js';

/** A token's last use is written at most this often: one write per minute, not one per request. */
const LAST_USED_EVERY_MS = 60_000;

interface UserRow {
  id: string;
  user_name: string;
  org_role: OrgRole;
  active: boolean;
  idp_groups: string[];
}

/**
 * A user's grants: their organisation role and project roles, raised by the
 * roles their groups give (SCIM groups and the identity provider's groups
 * claim, mapped by AUTH_GROUP_ROLES). Read from the database on every
 * request, so a role removed or a user deactivated counts on the next
 * request, on every replica.
 */
export async function userGrants(
  db: Db,
  groupRoles: Record<string, GroupGrant>,
  user: UserRow,
): Promise<Pick<Principal, 'orgRole' | 'projects'>> {
  const [roles, groups] = await Promise.all([
    db('project_roles')
      .where({ user_id: user.id })
      .select<Array<{ project_id: string; role: ProjectRole }>>('project_id', 'role'),
    db('user_group_members as m')
      .join('user_groups as g', 'g.id', 'm.group_id')
      .where('m.user_id', user.id)
      .pluck<string[]>('g.display_name'),
  ]);
  let orgRole = user.org_role;
  const projects = new Map<string, ProjectRole>(roles.map((r) => [r.project_id, r.role]));
  for (const name of new Set([...groups, ...user.idp_groups])) {
    const grant = groupRoles[name];
    if (!grant) continue;
    if (grant.org_role) orgRole = higherOrgRole(orgRole, grant.org_role);
    for (const [projectId, role] of Object.entries(grant.projects ?? {})) {
      const held = projects.get(projectId);
      projects.set(projectId, held ? higherProjectRole(held, role) : role);
    }
  }
  return { orgRole, projects };
}

const activeUser = (db: Db, id: string) =>
  db('users')
    .where({ id, active: true })
    .first<UserRow | undefined>('id', 'user_name', 'org_role', 'active', 'idp_groups');

interface TokenRow {
  id: string;
  name: string;
  kind: 'personal' | 'service';
  user_id: string | null;
  org_role: OrgRole | null;
  project_roles: Record<string, ProjectRole> | null;
  last_used_at: Date | null;
}

/**
 * The principal of an API token, or undefined when it is unknown, revoked,
 * expired, or its user is deactivated. A personal token acts as its user,
 * narrowed to the roles the token was given (never wider than the user's);
 * a service token holds exactly the roles it was given.
 */
export async function principalOfApiToken(
  db: Db,
  groupRoles: Record<string, GroupGrant>,
  secret: string,
): Promise<Principal | undefined> {
  if (!secret.startsWith(CREDENTIAL_PREFIX.personal) && !secret.startsWith(CREDENTIAL_PREFIX.service))
    return undefined;
  const token = await db('api_tokens')
    .where({ token_hash: credentialDigest(secret) })
    .whereNull('revoked_at')
    .where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', db.fn.now()))
    .first<TokenRow | undefined>(
      'id',
      'name',
      'kind',
      'user_id',
      'org_role',
      'project_roles',
      'last_used_at',
    );
  if (!token) return undefined;
  if (!token.last_used_at || Date.now() - token.last_used_at.getTime() > LAST_USED_EVERY_MS)
    await db('api_tokens').where({ id: token.id }).update({ last_used_at: db.fn.now() });
  const scoped = token.project_roles ? new Map(Object.entries(token.project_roles)) : undefined;
  if (token.kind === 'service')
    return {
      kind: 'service',
      via: 'token',
      tokenId: token.id,
      name: `service token ${token.name}`,
      orgRole: token.org_role ?? 'member',
      projects: scoped ?? new Map(),
    };
  const user = await activeUser(db, token.user_id!);
  if (!user) return undefined;
  const grants = await userGrants(db, groupRoles, user);
  return {
    kind: 'user',
    via: 'token',
    userId: user.id,
    tokenId: token.id,
    name: user.user_name,
    ...narrowed(grants, token.org_role, scoped),
  };
}

/** A user's grants, no wider than a token's: its org role caps theirs, its project list limits theirs. */
function narrowed(
  grants: Pick<Principal, 'orgRole' | 'projects'>,
  orgRole: OrgRole | null,
  scoped: Map<string, ProjectRole> | undefined,
): Pick<Principal, 'orgRole' | 'projects'> {
  const cappedOrg = orgRole ? lowerOrgRole(grants.orgRole, orgRole) : grants.orgRole;
  if (!scoped) return { orgRole: cappedOrg, projects: grants.projects };
  // A token limited to some projects acts as a member there (its owner's org role would open them all).
  const projects = new Map<string, ProjectRole>();
  for (const [projectId, role] of scoped) {
    const held = grants.projects.get(projectId) ?? (grants.orgRole !== 'member' ? 'admin' : undefined);
    if (held) projects.set(projectId, lowerProjectRole(held, role));
  }
  return { orgRole: 'member', projects };
}

/** The principal of a console session cookie, or undefined when unknown, expired or its user deactivated. */
export async function principalOfSession(
  db: Db,
  groupRoles: Record<string, GroupGrant>,
  secret: string,
): Promise<(Principal & { csrfToken: string }) | undefined> {
  if (!secret.startsWith(CREDENTIAL_PREFIX.session)) return undefined;
  const session = await db('user_sessions')
    .where({ token_hash: credentialDigest(secret) })
    .where('expires_at', '>', db.fn.now())
    .first<{ id: string; user_id: string; csrf_token: string } | undefined>('id', 'user_id', 'csrf_token');
  if (!session) return undefined;
  const user = await activeUser(db, session.user_id);
  if (!user) return undefined;
  return {
    kind: 'user',
    via: 'session',
    userId: user.id,
    sessionId: session.id,
    name: user.user_name,
    csrfToken: session.csrf_token,
    ...(await userGrants(db, groupRoles, user)),
  };
}
