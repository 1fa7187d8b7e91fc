import type { OrgRole } from '../../core/auth/roles.js';

export interface UserRow {
  id: string;
  user_name: string;
  display_name: string | null;
  email: string | null;
  org_role: OrgRole;
  active: boolean;
  password_hash: string | null;
  last_login_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A user as the API shows one: the password hash never leaves, only whether there is one. */
export interface UserView {
  id: string;
  user_name: string;
  display_name: string | null;
  email: string | null;
  org_role: OrgRole;
  active: boolean;
  has_password: boolean;
  last_login_at: string | null;
  created_at: string;
  updated_at: string;
}

export function userView(row: UserRow): UserView {
  return {
    id: row.id,
    user_name: row.user_name,
    display_name: row.display_name,
    email: row.email,
    org_role: row.org_role,
    active: row.active,
    has_password: row.password_hash !== null,
    last_login_at: row.last_login_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
