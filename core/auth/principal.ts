import { isOrgAdmin, type Grants, type ProjectRole } from './roles.js';

/**
 * Who is calling, once a credential is checked (ctx.state.principal):
 * - `open`: open mode (AUTH_MODE=open), with no ADMIN_TOKEN on loopback or with it; holds everything;
 * - `admin_token`: ADMIN_TOKEN in users mode, the break-glass owner (every use audited);
 * - `user`: a person, by a console session (`via: 'session'`) or a personal API token (`via: 'token'`);
 * - `service`: a service API token, which belongs to no person.
 */
export interface Principal extends Grants {
  kind: 'open' | 'admin_token' | 'user' | 'service';
  via: 'none' | 'admin_token' | 'session' | 'token';
  /** The user's id (kind `user`). */
  userId?: string;
  /** The API token's id (via `token`). */
  tokenId?: string;
  /** The console session's id (via `session`). */
  sessionId?: string;
  /** The text the audit log and a prompt label's history show: the user name, the token name, "admin token", "local". */
  name: string;
}

/** Everything, for open mode and the break-glass ADMIN_TOKEN. */
export function ownerPrincipal(kind: 'open' | 'admin_token', name: string): Principal {
  return {
    kind,
    via: kind === 'open' ? 'none' : 'admin_token',
    name,
    orgRole: 'owner',
    projects: new Map<string, ProjectRole>(),
  };
}

/** The projects a principal may see listed: undefined (all) for owners and admins, else those it holds a role in. */
export function visibleProjects(principal: Principal | undefined): string[] | undefined {
  if (!principal || isOrgAdmin(principal.orgRole)) return undefined;
  return [...principal.projects.keys()];
}
