import type { Knex } from 'knex';
import type { JsonText, Timestamp } from './columns.js';

/**
 * Users mode's tables (docs/users-and-roles.md): people, their roles, groups,
 * console sessions, API tokens, setup tokens, single sign-on flows in
 * progress, and the audit log. Credentials are stored only as SHA-256
 * digests (`*_hash`), passwords as argon2id hashes.
 */

export const UsersTableName = 'users';
export type DbUser = {
  id: string;
  user_name: string;
  display_name: string | null;
  email: string | null;
  org_role: 'owner' | 'admin' | 'member';
  active: boolean;
  password_hash: string | null;
  external_id: string | null;
  oidc_issuer: string | null;
  oidc_subject: string | null;
  idp_groups: string[];
  last_login_at: Date | null;
  created_at: Date;
  updated_at: Date;
};
export type UsersTable = Knex.CompositeTableType<
  DbUser,
  Pick<DbUser, 'user_name'> & Partial<Omit<DbUser, 'id' | 'created_at' | 'updated_at'>>,
  Partial<Omit<DbUser, 'id' | 'created_at' | 'last_login_at' | 'updated_at'>> & {
    last_login_at?: Timestamp;
    updated_at?: Timestamp;
  }
>;

export const ProjectRolesTableName = 'project_roles';
export type DbProjectRole = {
  user_id: string;
  project_id: string;
  role: 'admin' | 'developer' | 'operator' | 'viewer';
  created_at: Date;
  updated_at: Date;
};
export type ProjectRolesTable = Knex.CompositeTableType<
  DbProjectRole,
  Pick<DbProjectRole, 'user_id' | 'project_id' | 'role'>,
  { role?: DbProjectRole['role']; updated_at?: Timestamp }
>;

export const UserGroupsTableName = 'user_groups';
/** A group (from SCIM), whose display name AUTH_GROUP_ROLES maps to roles. */
export type DbUserGroup = {
  id: string;
  display_name: string;
  external_id: string | null;
  created_at: Date;
  updated_at: Date;
};
export type UserGroupsTable = Knex.CompositeTableType<
  DbUserGroup,
  Pick<DbUserGroup, 'display_name'> & { id?: string; external_id?: string | null },
  { display_name?: string; external_id?: string | null; updated_at?: Timestamp }
>;

export const UserGroupMembersTableName = 'user_group_members';
export type DbUserGroupMember = { group_id: string; user_id: string };
export type UserGroupMembersTable = Knex.CompositeTableType<DbUserGroupMember, DbUserGroupMember, never>;

export const UserSessionsTableName = 'user_sessions';
export type DbUserSession = {
  id: string;
  token_hash: string;
  csrf_token: string;
  user_id: string;
  method: string;
  ip: string | null;
  user_agent: string | null;
  created_at: Date;
  expires_at: Date;
};
export type UserSessionsTable = Knex.CompositeTableType<
  DbUserSession,
  Omit<DbUserSession, 'id' | 'created_at' | 'ip' | 'user_agent'> & {
    ip?: string | null;
    user_agent?: string | null;
  },
  never
>;

export const ApiTokensTableName = 'api_tokens';
export type DbApiToken = {
  id: string;
  name: string;
  kind: 'personal' | 'service';
  user_id: string | null;
  created_by: string | null;
  token_hash: string;
  token_prefix: string;
  org_role: 'owner' | 'admin' | 'member' | null;
  /** Project id → role; null: the owner's roles (personal) or none (service). */
  project_roles: Record<string, 'admin' | 'developer' | 'operator' | 'viewer'> | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
};
export type ApiTokensTable = Knex.CompositeTableType<
  DbApiToken,
  Pick<DbApiToken, 'name' | 'kind' | 'token_hash' | 'token_prefix'> & {
    user_id?: string | null;
    created_by?: string | null;
    org_role?: DbApiToken['org_role'];
    project_roles?: JsonText | null;
    expires_at?: Date | null;
  },
  { revoked_at?: Timestamp; last_used_at?: Timestamp }
>;

export const SetupTokensTableName = 'setup_tokens';
export type DbSetupToken = { token_hash: string; created_at: Date };
export type SetupTokensTable = Knex.CompositeTableType<DbSetupToken, { token_hash: string }, never>;

export const OidcLoginFlowsTableName = 'oidc_login_flows';
export type DbOidcLoginFlow = {
  state: string;
  code_verifier: string;
  nonce: string;
  return_to: string | null;
  expires_at: Date;
};
export type OidcLoginFlowsTable = Knex.CompositeTableType<
  DbOidcLoginFlow,
  Omit<DbOidcLoginFlow, 'return_to'> & { return_to?: string | null },
  never
>;

export const AuditEventsTableName = 'audit_events';
/** One audit event: who, what, on what, from where, the fields before and after (secrets redacted). */
export type DbAuditEvent = {
  id: string;
  at: Date;
  actor_type: string;
  actor_id: string | null;
  actor_name: string | null;
  action: string;
  resource_type: string | null;
  resource_id: string | null;
  project_id: string | null;
  method: string | null;
  path: string | null;
  status: number | null;
  ip: string | null;
  user_agent: string | null;
  before: unknown;
  after: unknown;
  details: Record<string, unknown> | null;
};
export type AuditEventsTable = Knex.CompositeTableType<
  DbAuditEvent,
  Partial<Omit<DbAuditEvent, 'id' | 'before' | 'after' | 'details'>> &
    Pick<DbAuditEvent, 'actor_type' | 'action'> & {
      before?: JsonText | null;
      after?: JsonText | null;
      details?: JsonText | null;
    },
  { at?: Date }
>;

declare module 'knex/types/tables.js' {
  interface Tables {
    users: UsersTable;
    project_roles: ProjectRolesTable;
    user_groups: UserGroupsTable;
    user_group_members: UserGroupMembersTable;
    user_sessions: UserSessionsTable;
    api_tokens: ApiTokensTable;
    setup_tokens: SetupTokensTable;
    oidc_login_flows: OidcLoginFlowsTable;
    audit_events: AuditEventsTable;
  }
}
