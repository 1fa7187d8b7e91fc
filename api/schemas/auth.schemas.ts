import Joi from 'joi';
import { ORG_ROLES, PROJECT_ROLES } from '../../core/auth/roles.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../core/auth/passwords.js';
import { timestamp, uuid } from './common.schemas.js';

/** A user's sign-in name: case-insensitively unique (an e-mail address is typical; SCIM's userName). */
export const userName = Joi.string().trim().min(1).max(256);
export const password = Joi.string()
  .min(PASSWORD_MIN_LENGTH)
  .max(PASSWORD_MAX_LENGTH)
  .description(`at least ${PASSWORD_MIN_LENGTH} characters`);
export const displayName = Joi.string().trim().max(256).allow('', null);
export const email = Joi.string().trim().email({ tlds: false }).max(320).allow(null);
export const orgRole = Joi.string().valid(...ORG_ROLES);
export const projectRole = Joi.string().valid(...PROJECT_ROLES);

export const authConfigResponse = Joi.object({
  mode: Joi.string().valid('open', 'users'),
  setup_required: Joi.boolean().description(
    'users mode and no user yet: the first owner is created with POST /auth/setup',
  ),
  password_login: Joi.boolean(),
  sso: Joi.object({ button_label: Joi.string(), login_url: Joi.string() }).allow(null),
});

export const setup = {
  body: Joi.object({
    setup_token: Joi.string()
      .min(1)
      .max(512)
      .required()
      .description('printed in the log at start, or AUTH_SETUP_TOKEN'),
    user_name: userName.required(),
    password: password.required(),
    display_name: displayName,
  }).required(),
};

export const login = {
  body: Joi.object({
    user_name: userName.required(),
    // Not held to today's length rule: a login only compares.
    password: Joi.string().min(1).max(PASSWORD_MAX_LENGTH).required(),
  }).required(),
};

/** A user as the API shows one (never the password hash). */
export const userResponse = Joi.object({
  id: uuid,
  user_name: Joi.string(),
  display_name: Joi.string().allow(null),
  email: Joi.string().allow(null),
  org_role: orgRole,
  active: Joi.boolean(),
  has_password: Joi.boolean(),
  last_login_at: timestamp.allow(null),
  created_at: timestamp,
  updated_at: timestamp,
});

export const signedInResponse = Joi.object({
  user: userResponse,
  csrf_token: Joi.string().description(
    `send it as the x-csrf-token header on every change made with the session cookie`,
  ),
});

export const sessionResponse = Joi.object({
  user: Joi.object({
    id: uuid,
    user_name: Joi.string(),
    display_name: Joi.string().allow(null),
    email: Joi.string().allow(null),
    org_role: orgRole,
  })
    .allow(null)
    .description('null for a service token or ADMIN_TOKEN'),
  principal: Joi.object({
    kind: Joi.string().valid('open', 'admin_token', 'user', 'service'),
    via: Joi.string().valid('none', 'admin_token', 'session', 'token'),
    name: Joi.string(),
    org_role: orgRole.description('the role in effect (groups may raise it, a token may narrow it)'),
  }),
  project_roles: Joi.array().items(Joi.object({ project_id: uuid, role: projectRole })),
  csrf_token: Joi.string()
    .allow(null)
    .description("the session's CSRF token (null unless signed in by the session cookie)"),
});

export interface SetupBody {
  setup_token: string;
  user_name: string;
  password: string;
  display_name?: string | null;
}
export interface LoginBody {
  user_name: string;
  password: string;
}
