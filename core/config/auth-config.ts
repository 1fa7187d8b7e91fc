/**
 * The users-mode settings (AUTH_MODE and what goes with it), mapped from the
 * validated environment. AUTH_GROUP_ROLES is JSON checked here, so a typo in
 * a role stops start-up naming the group rather than granting nothing.
 */
import Joi from 'joi';
import type { AuthConfig, GroupGrant } from './config-types.js';

const grantSchema = Joi.object({
  org_role: Joi.string().valid('owner', 'admin', 'member'),
  projects: Joi.object().pattern(
    Joi.string().guid(),
    Joi.string().valid('admin', 'developer', 'operator', 'viewer'),
  ),
});
const groupRolesSchema = Joi.object().pattern(Joi.string().min(1).max(256), grantSchema);

/** AUTH_GROUP_ROLES parsed, or a problem naming the variable (pushed on `problems`). */
export function parseGroupRoles(raw: string | undefined, problems: string[]): Record<string, GroupGrant> {
  if (raw === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    problems.push(
      'AUTH_GROUP_ROLES must be JSON: {"group name": {"org_role": "admin", "projects": {"<project id>": "developer"}}}',
    );
    return {};
  }
  const { value, error } = groupRolesSchema.validate(parsed) as {
    value: unknown;
    error?: Joi.ValidationError;
  };
  if (error) {
    problems.push(`AUTH_GROUP_ROLES: ${error.message}`);
    return {};
  }
  return value as Record<string, GroupGrant>;
}

/** Cross-variable rules of users mode; each broken one is pushed on `problems`. */
export function checkAuthSettings(v: Record<string, unknown>, problems: string[]): void {
  if (v.OIDC_ISSUER !== undefined && v.OIDC_CLIENT_ID === undefined)
    problems.push('OIDC_ISSUER needs OIDC_CLIENT_ID (the client registered at the provider)');
  if (v.OIDC_CLIENT_ID !== undefined && v.OIDC_ISSUER === undefined)
    problems.push('OIDC_CLIENT_ID needs OIDC_ISSUER (the provider)');
}

export function authConfig(v: Record<string, unknown>, groupRoles: Record<string, GroupGrant>): AuthConfig {
  return {
    mode: v.AUTH_MODE as 'open' | 'users',
    adminTokenInUsersMode: v.ADMIN_TOKEN_IN_USERS_MODE as boolean,
    setupToken: v.AUTH_SETUP_TOKEN as string | undefined,
    sessionTtlSeconds: v.AUTH_SESSION_TTL_SECONDS as number,
    groupRoles,
    scimToken: v.SCIM_TOKEN as string | undefined,
    oidc:
      v.OIDC_ISSUER === undefined
        ? undefined
        : {
            issuer: v.OIDC_ISSUER as string,
            clientId: v.OIDC_CLIENT_ID as string,
            clientSecret: v.OIDC_CLIENT_SECRET as string | undefined,
            scopes: v.OIDC_SCOPES as string,
            groupsClaim: v.OIDC_GROUPS_CLAIM as string,
            buttonLabel: v.OIDC_BUTTON_LABEL as string,
            jit: v.OIDC_JIT as boolean,
          },
    loginThrottle: {
      maxFailures: v.AUTH_LOGIN_MAX_FAILURES as number,
      windowSeconds: v.AUTH_LOGIN_FAILURE_WINDOW_SECONDS as number,
    },
    auditRetentionDays: v.AUDIT_RETENTION_DAYS as number,
  };
}
