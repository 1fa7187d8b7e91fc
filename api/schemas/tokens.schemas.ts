import Joi from 'joi';
import type { OrgRole, ProjectRole } from '../../core/auth/roles.js';
import { idParams, name, pagination, timestamp, uuid } from './common.schemas.js';
import { orgRole, projectRole } from './auth.schemas.js';

const futureDate = Joi.string()
  .isoDate()
  .custom((value: string, helpers) =>
    Date.parse(value) > Date.now() ? value : helpers.message({ custom: '{{#label}} must be in the future' }),
  );

export const tokenList = { query: Joi.object({ ...pagination }) };
export const tokenCreate = {
  body: Joi.object({
    name: name.required(),
    kind: Joi.string().valid('personal', 'service').default('personal'),
    expires_at: futureDate.allow(null),
    expires_in_days: Joi.number().integer().min(1).max(3650),
    org_role: orgRole
      .allow(null)
      .description("personal: caps the user's own; service: the role it holds (default member)"),
    project_roles: Joi.object()
      .pattern(uuid, projectRole)
      .max(1000)
      .allow(null)
      .description('project id → role; given, the token reaches these projects only'),
  })
    .oxor('expires_at', 'expires_in_days')
    .required(),
};
export const tokenDelete = { params: idParams };

/** A token as the API shows one: never its secret (after the create answer) nor its hash. */
export const tokenResponse = Joi.object({
  id: uuid,
  name: Joi.string(),
  kind: Joi.string().valid('personal', 'service'),
  user_id: uuid.allow(null),
  created_by: uuid.allow(null),
  token_prefix: Joi.string().description('the first characters of the secret, to recognise it'),
  org_role: orgRole.allow(null),
  project_roles: Joi.object().pattern(uuid, projectRole).allow(null),
  expires_at: timestamp.allow(null),
  revoked_at: timestamp.allow(null),
  last_used_at: timestamp.allow(null),
  created_at: timestamp,
});
export const tokenListResponse = Joi.array().items(tokenResponse);
export const tokenCreateResponse = tokenResponse.keys({
  token: Joi.string().description('the secret, shown this once: send it as Authorization: Bearer'),
});

export interface TokenCreateBody {
  name: string;
  kind: 'personal' | 'service';
  expires_at?: string | null;
  expires_in_days?: number;
  org_role?: OrgRole | null;
  project_roles?: Record<string, ProjectRole> | null;
}
