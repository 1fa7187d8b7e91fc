import { createContext, useContext } from 'react';
import type { AuthConfig, Session } from '../api/types.js';
import { allows, isOrgAdmin, orgRoleOf, type Grants, type Need } from '../lib/permissions.js';
import { useProject } from './project.js';

/** How the console is signed in: open mode (no users; ADMIN_TOKEN if set), or a user's session. */
export type AuthState = { mode: 'open' } | { mode: 'users'; config: AuthConfig; session: Session };

export const AuthContext = createContext<AuthState>({ mode: 'open' });

export function useAuth(): AuthState {
  return useContext(AuthContext);
}

function grantsOf(auth: AuthState): Grants {
  return auth.mode === 'open' ? 'open' : auth.session;
}

/**
 * Whether the user may do what `need` names in `projectId`, by default the
 * project the pages work in: pages hide (not just disable) what the API would
 * refuse. Always true in open mode.
 */
export function useCan(): (need: Need, projectId?: string) => boolean {
  const auth = useAuth();
  const { project } = useProject();
  return (need, projectId = project?.id) => allows(grantsOf(auth), need, projectId);
}

/** Whether the user manages the organisation (users, audit log, providers, keys); true in open mode. */
export function useOrgAdmin(): boolean {
  const auth = useAuth();
  return auth.mode === 'open' || isOrgAdmin(orgRoleOf(auth.session));
}
