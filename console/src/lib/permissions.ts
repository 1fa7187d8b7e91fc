import type { OrgRole, ProjectRole, Session } from '../api/types.js';

/**
 * What the signed-in user may do, as the API decides it (core/auth/roles.ts,
 * mirrored: the console hides what the API would refuse). Each project role
 * holds the ones below it: `read` everything in the project; `operate` runs,
 * decisions on paused runs and approvals; `develop` agents, prompts, schemas,
 * MCP servers, A2A agents, conversations, evals, crons, datasets and
 * webhooks; `admin` the project's settings, members and models. Owners and
 * admins of the organisation hold everything in every project, and alone
 * manage providers, virtual keys, users and the audit log.
 */
export type Capability = 'read' | 'operate' | 'develop' | 'admin';
/** A capability in the current project, or `org:admin` for organisation-level pages. */
export type Need = Capability | 'org:admin';

const PROJECT_ROLE_CAPABILITIES: Record<ProjectRole, readonly Capability[]> = {
  viewer: ['read'],
  operator: ['read', 'operate'],
  developer: ['read', 'operate', 'develop'],
  admin: ['read', 'operate', 'develop', 'admin'],
};

export const isOrgAdmin = (role: OrgRole | undefined): boolean => role === 'owner' || role === 'admin';

/** Who is asking: `open` when the server has no users (everything is allowed, as before users existed). */
export type Grants = 'open' | Pick<Session, 'user' | 'principal' | 'project_roles'>;

/** The organisation role of a session (its user's; ADMIN_TOKEN's principal has no user). */
export const orgRoleOf = (grants: Exclude<Grants, 'open'>): OrgRole | undefined =>
  grants.user?.org_role ?? grants.principal?.org_role;

/** Whether `grants` hold `need` in `projectId` (the project the page works in). */
export function allows(grants: Grants, need: Need, projectId: string | undefined): boolean {
  if (grants === 'open') return true;
  if (isOrgAdmin(orgRoleOf(grants))) return true;
  if (need === 'org:admin' || projectId === undefined) return false;
  const role = grants.project_roles?.find((r) => r.project_id === projectId)?.role;
  return role !== undefined && PROJECT_ROLE_CAPABILITIES[role].includes(need);
}
