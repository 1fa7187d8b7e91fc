/** What each role may do in the console, mirroring the API's roles (core/auth/roles.ts). */
import { describe, expect, it } from 'vitest';
import type { ProjectRole } from '../src/api/types.js';
import { allows, type Need } from '../src/lib/permissions.js';

const NEEDS: Need[] = ['read', 'operate', 'develop', 'admin', 'org:admin'];

function member(role?: ProjectRole, orgRole: 'owner' | 'admin' | 'member' = 'member') {
  return {
    user: { id: 'u', user_name: 'u', display_name: null, email: null, org_role: orgRole },
    project_roles: role ? [{ project_id: 'p-1', role }] : [],
  };
}
const allowed = (grants: Parameters<typeof allows>[0], project = 'p-1') =>
  NEEDS.filter((n) => allows(grants, n, project));

describe('the permission helper', () => {
  it('gives each project role its own and the lower ones, in its project only', () => {
    expect(allowed(member('viewer'))).toEqual(['read']);
    expect(allowed(member('operator'))).toEqual(['read', 'operate']);
    expect(allowed(member('developer'))).toEqual(['read', 'operate', 'develop']);
    expect(allowed(member('admin'))).toEqual(['read', 'operate', 'develop', 'admin']);
    expect(allowed(member('admin'), 'p-other')).toEqual([]);
    expect(allowed(member())).toEqual([]);
  });

  it('gives organisation owners and admins everything, in every project, and no one else org:admin', () => {
    expect(allowed(member(undefined, 'owner'), 'p-any')).toEqual(NEEDS);
    expect(allowed(member(undefined, 'admin'), 'p-any')).toEqual(NEEDS);
    expect(allows(member(undefined, 'admin'), 'org:admin', undefined)).toBe(true);
    expect(allows(member('admin'), 'org:admin', 'p-1')).toBe(false);
  });

  it('allows everything in open mode, as before users existed', () => {
    expect(allowed('open')).toEqual(NEEDS);
    expect(allows('open', 'develop', undefined)).toBe(true);
  });

  it('allows nothing of a project when no project is chosen', () => {
    expect(allows(member('admin'), 'read', undefined)).toBe(false);
  });
});
