/**
 * Roles and what they allow. An organisation role (owner, admin, member) and
 * a role per project (admin, developer, operator, viewer). Owners and admins
 * hold every project capability in every project; members hold what their
 * project roles give. A route declares one permission (api/http/api-router.ts);
 * `allows` is the only place that decides whether a principal has it.
 */
export const ORG_ROLES = ['owner', 'admin', 'member'] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

export const PROJECT_ROLES = ['admin', 'developer', 'operator', 'viewer'] as const;
export type ProjectRole = (typeof PROJECT_ROLES)[number];

/**
 * What a project role gives, by kind of work: `read` everything in the
 * project; `operate` runs, decisions on paused runs, traces and usage;
 * `develop` agents, prompts, schemas, MCP servers, conversations, evals and
 * crons (a developer also operates: testing an agent means running it);
 * `admin` the project itself (its settings, its members).
 */
export const CAPABILITIES = ['read', 'operate', 'develop', 'admin'] as const;
export type Capability = (typeof CAPABILITIES)[number];

const PROJECT_ROLE_CAPABILITIES: Record<ProjectRole, readonly Capability[]> = {
  viewer: ['read'],
  operator: ['read', 'operate'],
  developer: ['read', 'operate', 'develop'],
  admin: ['read', 'operate', 'develop', 'admin'],
};

/**
 * The permission a route needs:
 * - `public`: no credential at all (health, the OpenAPI document, login);
 * - `signed-in`: any principal (one's own profile and tokens, the project list, filtered);
 * - `org:read`: any member of the organisation (the model catalogue);
 * - `org:admin`: owners and admins (providers, virtual keys, users, the audit log);
 * - `project:<capability>`: that capability in the project the request is about.
 */
export const PERMISSIONS = [
  'public',
  'signed-in',
  'org:read',
  'org:admin',
  'project:read',
  'project:operate',
  'project:develop',
  'project:admin',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** Rank for "at least": a higher role holds everything a lower one does. */
const ORG_RANK: Record<OrgRole, number> = { member: 0, admin: 1, owner: 2 };
const PROJECT_RANK: Record<ProjectRole, number> = { viewer: 0, operator: 1, developer: 2, admin: 3 };

export const higherOrgRole = (a: OrgRole, b: OrgRole): OrgRole => (ORG_RANK[a] >= ORG_RANK[b] ? a : b);
export const lowerOrgRole = (a: OrgRole, b: OrgRole): OrgRole => (ORG_RANK[a] <= ORG_RANK[b] ? a : b);
export const higherProjectRole = (a: ProjectRole, b: ProjectRole): ProjectRole =>
  PROJECT_RANK[a] >= PROJECT_RANK[b] ? a : b;
export const lowerProjectRole = (a: ProjectRole, b: ProjectRole): ProjectRole =>
  PROJECT_RANK[a] <= PROJECT_RANK[b] ? a : b;
export const isOrgAdmin = (role: OrgRole | undefined): boolean => role === 'owner' || role === 'admin';

/** What a principal holds, as `allows` reads it. */
export interface Grants {
  orgRole: OrgRole;
  /** project id → role. */
  projects: ReadonlyMap<string, ProjectRole>;
}

export const projectRoleAllows = (role: ProjectRole | undefined, capability: Capability): boolean =>
  role !== undefined && PROJECT_ROLE_CAPABILITIES[role].includes(capability);

/**
 * Whether `grants` hold `permission` for `projectId`. A project permission
 * with no project named (a list across projects) needs the organisation
 * role; `projectId` of `'any'` asks whether some project gives it (the check
 * made before a request's input is read).
 */
export function allows(grants: Grants, permission: Permission, projectId?: string): boolean {
  if (permission === 'public' || permission === 'signed-in' || permission === 'org:read') return true;
  if (permission === 'org:admin') return isOrgAdmin(grants.orgRole);
  if (isOrgAdmin(grants.orgRole)) return true;
  const capability = permission.slice('project:'.length) as Capability;
  if (projectId === 'any') return [...grants.projects.values()].some((r) => projectRoleAllows(r, capability));
  if (projectId === undefined) return false;
  return projectRoleAllows(grants.projects.get(projectId), capability);
}

/** The project roles whose holders may use `permission` (the permission matrix, the OpenAPI text). */
export function projectRolesAllowed(permission: Permission): ProjectRole[] {
  if (!permission.startsWith('project:')) return [];
  const capability = permission.slice('project:'.length) as Capability;
  return PROJECT_ROLES.filter((r) => projectRoleAllows(r, capability));
}
